//! The Docker Engine API client of the Kathará backend against a stand-in engine on a unix
//! socket: no dockerd needed, so these run in every test run (the live ones are in
//! `kathara_engine_live.rs`).
//!
//! The stand-in speaks just enough of API 1.41 over HTTP/1.1: `/version`, the container list,
//! exec create, exec start (101 upgrade, then Docker's multiplexed frames: a byte for the stream,
//! three zeros, a big-endian length) and exec inspect. What each command "does" is chosen by
//! its last argument; every command line it receives is recorded.

use faultbench_emu::kathara::{DockerEngine, EngineError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

const T: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Engine {
    /// Every exec's command line, in order.
    cmds: Mutex<Vec<Vec<String>>>,
    /// Exit code of each exec id.
    codes: Mutex<Vec<i64>>,
    /// The image has no `timeout`.
    no_timeout: bool,
}

/// What a command does: (stdout, stderr, exit code).
fn behaviour(e: &Engine, cmd: &[String]) -> (Vec<u8>, Vec<u8>, i64) {
    if e.no_timeout && cmd.first().is_some_and(|c| c == "timeout") {
        let oci = "OCI runtime exec failed: exec failed: unable to start container process: \
                   exec: \"timeout\": executable file not found in $PATH: unknown\r\n";
        return (oci.as_bytes().to_vec(), Vec::new(), 126);
    }
    match cmd.last().map(String::as_str) {
        Some("hello") => (b"out\n".to_vec(), b"err\n".to_vec(), 3),
        Some("flood") => (vec![b'a'; 5000], b"tail\n".to_vec(), 0),
        _ => (Vec::new(), Vec::new(), 0),
    }
}

fn frame(stream: u8, data: &[u8]) -> Vec<u8> {
    let mut f = vec![stream, 0, 0, 0];
    f.extend_from_slice(&(data.len() as u32).to_be_bytes());
    f.extend_from_slice(data);
    f
}

fn json_response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The number of exec `e<N>` in `…/exec/e<N><tail>`.
fn exec_id(path: &str, tail: &str) -> Option<usize> {
    let rest = path.split_once("/exec/e")?.1;
    rest.strip_suffix(tail)?.parse().ok()
}

/// Serves one connection: requests until the client closes it or an exec attaches.
async fn serve(engine: Arc<Engine>, mut conn: UnixStream) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut chunk = [0u8; 4096];
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
        buf.drain(..head_end + len);
        let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
        let path = path.split('?').next().unwrap_or("").to_string();
        if path.ends_with("/version") {
            let v = r#"{"ApiVersion":"1.41","MinAPIVersion":"1.12","Version":"20.10.24"}"#;
            let _ = conn.write_all(&json_response("200 OK", v)).await;
        } else if path.ends_with("/containers/json") {
            let list = r#"[{"Id":"c-r1","Labels":{"app":"kathara","lab_hash":"H","name":"r1"},"State":"running"},
                           {"Id":"c-pc1","Labels":{"app":"kathara","lab_hash":"H","name":"pc1"},"State":"exited"}]"#;
            let _ = conn.write_all(&json_response("200 OK", list)).await;
        } else if path.contains("/containers/") && path.ends_with("/exec") {
            if path.contains("/containers/gone/") {
                let m = r#"{"message":"Container gone is not running"}"#;
                let _ = conn.write_all(&json_response("409 Conflict", m)).await;
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            let cmd: Vec<String> = v["Cmd"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            let id = {
                let mut cmds = engine.cmds.lock().unwrap();
                cmds.push(cmd);
                format!("e{}", cmds.len() - 1)
            };
            let _ = conn
                .write_all(&json_response(
                    "201 Created",
                    &format!("{{\"Id\":\"{id}\"}}"),
                ))
                .await;
        } else if let Some(n) = exec_id(&path, "/start") {
            let cmd = engine.cmds.lock().unwrap()[n].clone();
            let (out, err, code) = behaviour(&engine, &cmd);
            {
                let mut codes = engine.codes.lock().unwrap();
                let len = codes.len().max(n + 1);
                codes.resize(len, 0);
                codes[n] = code;
            }
            let mut resp = b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n".to_vec();
            // Output arrives in pieces, stdout and stderr interleaved.
            for piece in out.chunks(1024) {
                resp.extend(frame(1, piece));
            }
            if !err.is_empty() {
                resp.extend(frame(2, &err));
            }
            let _ = conn.write_all(&resp).await;
            let _ = conn.shutdown().await;
            return;
        } else if let Some(n) = exec_id(&path, "/json") {
            let code = engine.codes.lock().unwrap()[n];
            let v = format!(r#"{{"Running":false,"ExitCode":{code},"Pid":0}}"#);
            let _ = conn.write_all(&json_response("200 OK", &v)).await;
        } else {
            let _ = conn
                .write_all(&json_response(
                    "404 Not Found",
                    &format!(r#"{{"message":"no route for {path}"}}"#),
                ))
                .await;
        }
    }
}

/// A stand-in engine on a fresh socket, and a client connected to it with a cap of 3.
async fn rig(no_timeout: bool) -> (tempfile::TempDir, Arc<Engine>, DockerEngine) {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("docker.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    let engine = Arc::new(Engine {
        no_timeout,
        ..Default::default()
    });
    let e = engine.clone();
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            tokio::spawn(serve(e.clone(), conn));
        }
    });
    let client = DockerEngine::connect(sock.to_str().unwrap(), 3)
        .await
        .unwrap();
    (dir, engine, client)
}

fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn frames_are_split_into_stdout_and_stderr_and_the_exit_code_is_inspected() {
    let (_d, engine, client) = rig(false).await;
    let out = client
        .exec("c-r1", &argv(&["hello"]), T, 1 << 20)
        .await
        .unwrap();
    assert_eq!(out.stdout, "out\n");
    assert_eq!(out.stderr, "err\n");
    assert_eq!(out.exit_code, Some(3));
    assert!(!out.timed_out && !out.truncated);
    // The command was bounded inside the device.
    assert_eq!(
        engine.cmds.lock().unwrap()[0],
        ["timeout", "-s", "KILL", "2", "hello"]
    );
    assert_eq!(client.limit(), 3);
    assert_eq!(client.peak_in_flight(), 1);
}

#[tokio::test]
async fn output_past_the_cap_is_dropped_and_flagged_per_stream() {
    let (_d, _engine, client) = rig(false).await;
    let out = client
        .exec("c-r1", &argv(&["flood"]), T, 1500)
        .await
        .unwrap();
    assert_eq!(out.stdout.len(), 1500);
    assert!(out.truncated);
    assert_eq!(out.stderr, "tail\n");
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test]
async fn a_lab_is_listed_by_its_labels() {
    let (_d, _engine, client) = rig(false).await;
    let list = client.lab_containers("H").await.unwrap();
    let brief: Vec<(String, String, String)> = list
        .into_iter()
        .map(|c| (c.device, c.id, c.state))
        .collect();
    assert_eq!(
        brief,
        [
            ("r1".into(), "c-r1".into(), "running".into()),
            ("pc1".into(), "c-pc1".into(), "exited".into())
        ]
    );
}

#[tokio::test]
async fn a_stopped_container_is_not_running_and_a_missing_socket_names_the_fix() {
    let (_d, _engine, client) = rig(false).await;
    let e = client.exec("gone", &argv(&["true"]), T, 1 << 20).await;
    assert!(
        matches!(e, Err(EngineError::NotRunning(ref m)) if m.contains("not running")),
        "{e:?}"
    );
    let e = client.exec("c-r1", &[], T, 1 << 20).await;
    assert!(matches!(e, Err(EngineError::Unexpected(_))), "{e:?}");
    let e = DockerEngine::connect("/nonexistent/docker.sock", 2)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/nonexistent/docker.sock") && e.contains("install-deps.sh --kathara"),
        "{e}"
    );
}

#[tokio::test]
async fn an_image_without_timeout_gets_the_command_unwrapped() {
    let (_d, engine, client) = rig(true).await;
    let out = client
        .exec("c-r1", &argv(&["hello"]), T, 1 << 20)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(3), "{out:?}");
    assert_eq!(out.stdout, "out\n");
    let cmds = engine.cmds.lock().unwrap().clone();
    assert_eq!(cmds.len(), 2);
    assert_eq!(cmds[0][0], "timeout");
    assert_eq!(cmds[1], ["hello"]);
}
