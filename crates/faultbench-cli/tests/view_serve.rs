//! `faultbench view RUNS --serve ADDR` without --out, through the binary: the site is built in
//! a new private folder (not the old predictable `$TMPDIR/faultbench-view-<pid>`, which another
//! local user could make first), the server's headers are on the wire, and SIGTERM stops the
//! server and removes the folder. (The browser side is in `view_browser.rs`.)

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the server if the test fails before stopping it.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `view --serve` with TMPDIR set; returns the server, its site folder and address.
fn serve(runs: &Path, tmpdir: &Path) -> (Server, PathBuf, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("view")
        .arg(runs)
        .args(["--serve", "127.0.0.1:0"])
        .env("TMPDIR", tmpdir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let line = BufReader::new(stdout).lines().next().unwrap().unwrap();
    // "serving DIR at http://ADDR/ (Ctrl-C to stop)"
    let (dir, rest) = line
        .strip_prefix("serving ")
        .and_then(|l| l.split_once(" at http://"))
        .unwrap_or_else(|| panic!("{line}"));
    let addr = rest.split('/').next().unwrap().to_string();
    (server, PathBuf::from(dir), addr)
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serve_builds_in_a_private_folder_sends_its_headers_and_cleans_up_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let tmpdir = tmp.path().join("tmp");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::create_dir_all(&tmpdir).unwrap();

    let (mut server, dir, addr) = serve(&runs, &tmpdir);
    let pid = server.0.id();
    assert_eq!(dir.parent(), Some(tmpdir.as_path()), "{}", dir.display());
    assert_ne!(
        dir,
        tmpdir.join(format!("faultbench-view-{pid}")),
        "a name another user can guess and make first"
    );
    let meta = std::fs::symlink_metadata(&dir).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    assert!(dir.join("index.html").is_file());

    let index = http_get(&addr, "/");
    let head = index.split("\r\n\r\n").next().unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    for h in [
        "\r\nContent-Security-Policy: default-src 'none';",
        "\r\nX-Content-Type-Options: nosniff\r\n",
    ] {
        assert!(head.contains(h), "{h:?} not in\n{head}");
    }

    // SAFETY: kill(2) on our own child's pid; no memory is involved.
    unsafe {
        libc::kill(i32::try_from(pid).unwrap(), libc::SIGTERM);
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = server.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "view --serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(!dir.exists(), "the temporary site is removed on SIGTERM");
}
