//! `faultbench-netplugin`: the Docker network plugin process (see the crate docs).
//!
//! ```text
//! faultbench-netplugin --socket /run/docker/plugins/katharanp.sock \
//!     --state /var/lib/faultbench-netplugin/state.json \
//!     [--iptables /usr/sbin/iptables --ip6tables /usr/sbin/ip6tables | --no-firewall]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use faultbench_netplugin::Driver;
use faultbench_netplugin::firewall::Firewall;

const USAGE: &str = "usage: faultbench-netplugin --socket PATH --state PATH \
                     [--iptables BIN] [--ip6tables BIN] [--no-firewall]";

fn main() -> ExitCode {
    let mut socket: Option<PathBuf> = None;
    let mut state: Option<PathBuf> = None;
    let mut v4 = "/usr/sbin/iptables".to_owned();
    let mut v6 = Some("/usr/sbin/ip6tables".to_owned());
    let mut firewall = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--socket" => socket = args.next().map(PathBuf::from),
            "--state" => state = args.next().map(PathBuf::from),
            "--iptables" => v4 = args.next().unwrap_or_default(),
            "--ip6tables" => v6 = args.next().filter(|s| !s.is_empty()),
            "--no-firewall" => firewall = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("faultbench-netplugin: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let (Some(socket), Some(state)) = (socket, state) else {
        eprintln!("faultbench-netplugin: --socket and --state are required\n{USAGE}");
        return ExitCode::from(2);
    };
    let binaries = if firewall {
        std::iter::once(v4).chain(v6).collect()
    } else {
        Vec::new()
    };
    let mut driver = match Driver::open(&state, Firewall { binaries }) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("faultbench-netplugin: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "faultbench-netplugin: serving {} ({} networks, {} endpoints remembered)",
        socket.display(),
        driver.state().networks.len(),
        driver.state().endpoints.len()
    );
    match driver.serve(&socket) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("faultbench-netplugin: {e}");
            ExitCode::FAILURE
        }
    }
}
