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

#[tokio::test]
async fn lab_dep_orders_startups_and_shared_is_common() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            (
                "lab.conf",
                "a[0]=LINK\nb[0]=LINK\nc[0]=LINK\nb[ipv6]=true\nc[env]=\"GREETING=hi\"\nc[exec]=\"echo from-exec > /tmp/exec-ran\"\n",
            ),
            ("lab.dep", "b: a\n"),
            ("a.startup", "sleep 0.5; touch /shared/a-done\n"),
            (
                "b.startup",
                "test -e /shared/a-done && touch /shared/b-saw-a\n",
            ),
            ("shared/seed.txt", "from the lab's shared folder\n"),
        ],
    );
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    let out = lab
        .exec("c", &Command::shell("ls /shared; cat /shared/seed.txt; echo $GREETING; cat /tmp/exec-ran; test -e /tmp/EOS && echo eos"), T)
        .await
        .unwrap();
    assert_eq!(
        out.stdout, "a-done\nb-saw-a\nseed.txt\nfrom the lab's shared folder\nhi\nfrom-exec\neos\n",
        "{out:?}"
    );
    // Writes to /shared stay in the instance, not in the lab directory.
    assert!(!dir.path().join("shared/a-done").exists());
    // Kathará's defaults: IPv6 off unless ipv6=true; forwarding on; rp_filter off.
    let v6 = |d: &'static str| {
        let lab = &lab;
        async move {
            lab.exec(
                d,
                &Command::argv(["cat", "/proc/sys/net/ipv6/conf/all/disable_ipv6"]),
                T,
            )
            .await
            .unwrap()
            .stdout
        }
    };
    assert_eq!(v6("a").await, "1\n");
    assert_eq!(v6("b").await, "0\n");
    let out = lab
        .exec("a", &Command::shell("cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/conf/eth0/rp_filter; grep -c . /var/log/startup.log"), T)
        .await
        .unwrap();
    assert_eq!(out.stdout, "1\n0\n2\n", "{out:?}");
    lab.teardown().await.unwrap();
}
