//! A small WebDriver client for headless Chromium through `chromedriver` (Debian packages
//! `chromium` and `chromium-driver`), used by the viewer's browser test (faultbench-cli) and its
//! bench (faultbench-view).
//!
//! Chromium runs with the flags this machine needs (no sandbox as root, no background
//! networking, a fresh profile). chromedriver and the browser run in a process group of their
//! own, killed as a group when the [`Browser`] is dropped (or when starting it fails half-way),
//! so a failing test leaves nothing behind.

#![allow(dead_code)]

use base64::Engine;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver's process group, killed on drop (also when a test panics half-way).
struct Driver(Child);

impl Driver {
    fn kill(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            // The group holds chromedriver and the browser it started.
            // SAFETY: kill(2) on our own child's process group; no memory is involved.
            unsafe {
                libc::kill(-(self.0.id() as i32), libc::SIGKILL);
            }
            let _ = self.0.wait();
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.kill();
    }
}

pub struct Browser {
    driver: Driver,
    base: String,
    session: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session.
    pub async fn start() -> Browser {
        for bin in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(bin).exists(),
                "{bin} is missing: run scripts/install-deps.sh (Debian packages chromium, chromium-driver)"
            );
        }
        let port = free_port();
        let mut cmd = Command::new(CHROMEDRIVER);
        cmd.arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let driver = Driver(cmd.spawn().expect("chromedriver starts"));
        let base = format!("http://127.0.0.1:{port}");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        let t0 = Instant::now();
        loop {
            let ready = match http.get(format!("{base}/status")).send().await {
                Ok(r) => r
                    .json::<Value>()
                    .await
                    .is_ok_and(|v| v["value"]["ready"] == true),
                Err(_) => false,
            };
            if ready {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "chromedriver did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1300,1800",
                    // A headless page counts as hidden: keep its renderer at normal priority.
                    "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        }}});
        let mut b = Browser {
            driver,
            base,
            session: String::new(),
            http,
            _profile: profile,
        };
        let v = b.call("POST", "/session", caps).await;
        b.session = v["sessionId"].as_str().expect("a session").to_string();
        b
    }

    async fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let req = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body),
        };
        let resp = req.send().await.expect("WebDriver request");
        let v: Value = resp.json().await.expect("WebDriver JSON");
        if let Some(err) = v["value"]["error"].as_str() {
            panic!(
                "WebDriver {method} {path}: {err}: {}",
                v["value"]["message"]
            );
        }
        v["value"].clone()
    }

    fn at(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    /// Loads a URL.
    pub async fn goto(&self, url: &str) {
        self.call("POST", &self.at("/url"), json!({ "url": url }))
            .await;
    }

    /// The current URL.
    pub async fn url(&self) -> String {
        self.call("GET", &self.at("/url"), Value::Null)
            .await
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// Runs a script (its `return` value comes back).
    pub async fn exec(&self, script: &str, args: Value) -> Value {
        self.call(
            "POST",
            &self.at("/execute/sync"),
            json!({ "script": script, "args": args }),
        )
        .await
    }

    /// Waits until `condition` (a JS expression) is true.
    pub async fn wait_for(&self, condition: &str) {
        let t0 = Instant::now();
        loop {
            if self
                .exec(&format!("return !!({condition});"), json!([]))
                .await
                == true
            {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "timed out waiting for {condition}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Clicks the first element matching a CSS selector.
    pub async fn click(&self, css: &str) {
        let e = self
            .call(
                "POST",
                &self.at("/element"),
                json!({"using": "css selector", "value": css}),
            )
            .await;
        let id = e
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .expect("element id")
            .to_string();
        self.call("POST", &self.at(&format!("/element/{id}/click")), json!({}))
            .await;
    }

    /// Saves a PNG screenshot of the viewport.
    pub async fn screenshot(&self, path: &Path) {
        let v = self.call("GET", &self.at("/screenshot"), Value::Null).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or(""))
            .expect("base64 PNG");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }

    /// The browser's profile folder (unique to this browser: it names its processes).
    pub fn profile(&self) -> &Path {
        self._profile.path()
    }

    /// The process ids of this browser's renderers (from their command lines).
    pub fn renderers(&self) -> Vec<u32> {
        let profile = format!("--user-data-dir={}", self.profile().display());
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
                continue;
            };
            let cmd = String::from_utf8_lossy(&cmd);
            if cmd.contains("--type=renderer") && cmd.contains(&profile) {
                out.push(pid);
            }
        }
        out
    }

    /// Ends the session and stops chromedriver.
    pub async fn close(mut self) {
        let _ = self
            .http
            .delete(format!("{}{}", self.base, self.at("")))
            .send()
            .await;
        self.driver.kill();
    }
}
