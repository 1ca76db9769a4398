//! Argument validation: every value an agent supplies is checked against a strict grammar
//! before anything runs.
//!
//! Commands are run as argv inside the device, so no argument is ever parsed by a shell; the
//! grammar is a second fence and a source of clear messages ("interface names are …"). The only
//! free-form text is the script of `exec_shell`/`exec_shell_dual` (run with `sh -c` inside the
//! device, by design) and the vtysh line of `frr_exec` (one vtysh command, no newlines).

use faultbench_core::ToolError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::net::Ipv4Addr;

/// Parses a tool's JSON arguments into its typed form; `null` counts as `{}`.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    if !args.is_object() {
        return Err(invalid(tool, "arguments must be a JSON object"));
    }
    serde_json::from_value(args).map_err(|e| invalid(tool, e.to_string()))
}

/// An `InvalidArguments` error.
pub fn invalid(tool: &str, message: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments {
        tool: tool.to_string(),
        message: message.into(),
    }
}

/// The device must exist in the lab.
pub fn device(tool: &str, field: &str, name: &str, devices: &[String]) -> Result<(), ToolError> {
    if devices.iter().any(|d| d == name) {
        return Ok(());
    }
    Err(invalid(
        tool,
        format!(
            "`{field}`: no device `{}` in this lab (devices: {})",
            printable(name),
            devices.join(", ")
        ),
    ))
}

/// Interface names as the kernel allows them (1–15 chars), without shell or path characters.
pub fn interface(tool: &str, field: &str, name: &str) -> Result<(), ToolError> {
    let ok = (1..=15).contains(&name.len())
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:@-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(invalid(
            tool,
            format!(
                "`{field}`: `{}` is not an interface name (1-15 chars: letters, digits, `_ . : @ -`; e.g. eth0, eth0.10)",
                printable(name)
            ),
        ))
    }
}

/// systemd unit / init script names.
pub fn service(tool: &str, name: &str) -> Result<(), ToolError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.@:-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(invalid(
            tool,
            format!(
                "`service_name`: `{}` is not a service name (letters, digits, `_ . @ : -`; e.g. frr, nginx, isc-dhcp-server)",
                printable(name)
            ),
        ))
    }
}

/// Extra command-line words (`args` of ping/netstat, iperf client/server args): whitespace
/// separated words made of letters, digits and `. _ : / = , + @ % -`; at most 16 words.
pub fn words(tool: &str, field: &str, text: &str) -> Result<Vec<String>, ToolError> {
    let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if words.len() > 16 {
        return Err(invalid(tool, format!("`{field}`: at most 16 words")));
    }
    for w in &words {
        let ok = w.len() <= 128
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:/=,+@%-".contains(c))
            && w.chars().any(|c| c.is_ascii_alphanumeric());
        if !ok {
            return Err(invalid(
                tool,
                format!(
                    "`{field}`: `{}` is not allowed (options and values only: letters, digits and `. _ : / = , + @ % -`; no quotes, spaces inside words, or shell characters such as ; | & $ ` < > * ( ))",
                    printable(w)
                ),
            ));
        }
    }
    Ok(words)
}

/// An IPv4 address, if the text is exactly one.
pub fn ipv4(text: &str) -> Option<Ipv4Addr> {
    text.parse().ok()
}

/// `http(s)://host[:port][/path][?query]` with a conservative character set.
pub fn url(tool: &str, text: &str) -> Result<(), ToolError> {
    let bad = || {
        invalid(
            tool,
            format!(
                "`url`: `{}` is not an http(s) URL of the form http://host[:port]/path (host: a name or IPv4; no spaces, quotes or shell characters)",
                printable(text)
            ),
        )
    };
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))
        .ok_or_else(bad)?;
    if text.len() > 2048 {
        return Err(bad());
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && !host.starts_with(['-', '.']);
    let port_ok = port.is_none_or(|p| {
        !p.is_empty() && p.len() <= 5 && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
    });
    let path_ok = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._~%?=&+:@,-".contains(c));
    if host_ok && port_ok && path_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// A file path: 1–1024 chars of letters, digits and `/ . _ - + @ , : =`, not starting with `-`.
pub fn file_path(tool: &str, text: &str) -> Result<(), ToolError> {
    let ok = (1..=1024).contains(&text.len())
        && !text.starts_with('-')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@,:=".contains(c));
    if ok {
        Ok(())
    } else {
        Err(invalid(
            tool,
            format!(
                "`file_path`: `{}` is not a plain file path (letters, digits and `/ . _ - + @ , : =`; e.g. /etc/frr/frr.conf)",
                printable(text)
            ),
        ))
    }
}

/// A shell script for `exec_shell`: non-empty, at most 8 KiB, no NUL bytes.
pub fn script(tool: &str, field: &str, text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(invalid(tool, format!("`{field}` is empty")));
    }
    if text.len() > 8192 || text.contains('\0') {
        return Err(invalid(
            tool,
            format!("`{field}`: at most 8192 bytes and no NUL characters"),
        ));
    }
    Ok(())
}

/// One vtysh command line: non-empty, at most 1024 chars, printable, no newlines.
pub fn vtysh_line(tool: &str, text: &str) -> Result<(), ToolError> {
    let ok = !text.trim().is_empty() && text.len() <= 1024 && !text.chars().any(|c| c.is_control());
    if ok {
        Ok(())
    } else {
        Err(invalid(
            tool,
            "`command`: one vtysh command on one line (e.g. `show ip ospf neighbor`), at most 1024 characters",
        ))
    }
}

/// An integer in a range.
pub fn range(tool: &str, field: &str, v: u64, lo: u64, hi: u64) -> Result<(), ToolError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(invalid(
            tool,
            format!("`{field}` must be between {lo} and {hi} (got {v})"),
        ))
    }
}

/// Makes a rejected value safe to echo back (control characters escaped, length bounded).
fn printable(s: &str) -> String {
    let mut out: String = s.chars().take(80).flat_map(char::escape_default).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_reject_shell_syntax() {
        assert_eq!(
            words("t", "args", " -W 1  -i 0.2 ").unwrap(),
            ["-W", "1", "-i", "0.2"]
        );
        for bad in [
            "; touch /tmp/x",
            "-c1;id",
            "$(id)",
            "`id`",
            "a|b",
            "a&&b",
            "'x'",
            "\"x\"",
            ">out",
            "*",
            "-",
            "x\\y",
        ] {
            assert!(words("t", "args", bad).is_err(), "{bad}");
        }
        assert!(words("t", "args", &"a ".repeat(17)).is_err());
    }

    #[test]
    fn urls() {
        for ok in [
            "http://10.0.3.2",
            "http://web.lab:8080/index.html?a=1&b=2",
            "https://www.example.com/",
        ] {
            assert!(url("t", ok).is_ok(), "{ok}");
        }
        for bad in [
            "ftp://x",
            "http://",
            "http://a b",
            "http://x/$(id)",
            "http://x;id",
            "http://x:99999/",
            "http://-x/",
            "file:///etc/passwd",
            "http://x/`id`",
        ] {
            assert!(url("t", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_and_paths() {
        assert!(interface("t", "i", "eth0.10").is_ok());
        assert!(interface("t", "i", "eth0;id").is_err());
        assert!(interface("t", "i", "averyveryverylongname").is_err());
        assert!(service("t", "isc-dhcp-server").is_ok());
        assert!(service("t", "frr && reboot").is_err());
        assert!(file_path("t", "/etc/frr/frr.conf").is_ok());
        assert!(file_path("t", "/etc/x; rm -rf /").is_err());
        assert!(file_path("t", "--help").is_err());
        assert!(vtysh_line("t", "show ip route").is_ok());
        assert!(vtysh_line("t", "show ip route\nconfigure terminal").is_err());
        let err = device("t", "host_name", "pc\u{7}9", &["pc1".into()]).unwrap_err();
        assert!(err.to_string().contains("pc\\u{7}9") && err.to_string().contains("pc1"));
    }
}
