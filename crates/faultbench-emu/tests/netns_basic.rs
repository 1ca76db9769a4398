//! Live tests of the netns backend on small labs written inline (needs root).

use faultbench_core::emulator::{Command, Lab, LabRequest};
use faultbench_emu::netns::{self, NetnsEmulator};
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

fn write_lab(dir: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn two_hosts() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "a[0]=LINK\nb[0]=LINK\n"),
            ("a.startup", "ip addr add 10.9.0.1/24 dev eth0\n"),
            ("b.startup", "ip addr add 10.9.0.2/24 dev eth0\n"),
            ("b/etc/motd.lab", "hello from b\n"),
        ],
    );
    dir
}

#[tokio::test]
async fn two_hosts_deploy_exec_teardown() {
    let dir = two_hosts();
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    let name = lab.name().to_string();
    let out = lab
        .exec(
            "a",
            &Command::shell("hostname; ping -c1 -W1 10.9.0.2 >/dev/null && echo reached"),
            T,
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, "a\nreached\n", "{out:?}");
    let out = lab
        .exec("b", &Command::argv(["cat", "/etc/motd.lab"]), T)
        .await
        .unwrap();
    assert_eq!(out.stdout, "hello from b\n");
    let out = lab
        .exec(
            "a",
            &Command::shell("ps -e -o pid=,comm= | wc -l; cat /proc/sys/net/ipv4/ip_forward"),
            T,
        )
        .await
        .unwrap();
    eprintln!("{out:?}");
    assert!(netns::list().iter().any(|s| s.name == name));
    lab.teardown().await.unwrap();
    assert!(!netns::list().iter().any(|s| s.name == name));
    assert!(lab.exec("a", &Command::argv(["true"]), T).await.is_err());
}
