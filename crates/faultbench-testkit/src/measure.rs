//! What benches print beside wall time on a shared machine: this process's CPU time and the
//! load average (wall time there mostly measures waiting for a core).

/// CPU seconds this process has used (user + system, all threads), from `/proc/self/stat`;
/// 0 where it cannot be read.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
    // utime and stime are fields 14 and 15 of the line: 11 and 12 after the name (state is 0).
    let field = |i: usize| {
        rest.get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (field(11) + field(12)) / 100.0
}

/// The one-minute load average as printed in `/proc/loadavg` (`?` where it cannot be read).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split(' ')
        .next()
        .unwrap_or("?")
        .to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work_and_load_is_a_number() {
        let before = super::cpu_seconds();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 200 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
        }
        std::hint::black_box(x);
        assert!(
            super::cpu_seconds() > before,
            "a busy loop used no CPU time"
        );
        assert!(super::load_average().parse::<f64>().is_ok());
    }
}
