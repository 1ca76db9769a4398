//! The remote network-driver calls and what each does to the kernel and to the state.
//!
//! Docker is the authority on which networks exist: it keeps them across daemon and machine
//! restarts without calling `CreateNetwork` again, so a call naming a network this plugin has
//! no bridge for (state lost, or a reboot took the bridge) makes the bridge rather than failing.

use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::PluginError;
use crate::firewall::Firewall;
use crate::state::{Endpoint, State, valid_id};
use crate::{http, mac, netlink};

/// How long one connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The bridge of network `id`.
pub fn bridge_name(id: &str) -> String {
    format!("kt-{}", &id[..12])
}

/// The host end of endpoint `id`'s veth pair.
pub fn host_veth(id: &str) -> String {
    format!("kv-{}", &id[..12])
}

/// The container end of endpoint `id`'s veth pair, before Docker renames it `eth<N>`.
pub fn peer_veth(id: &str) -> String {
    format!("ki-{}", &id[..12])
}

/// The plugin: its state and where it keeps it.
#[derive(Debug)]
pub struct Driver {
    state: State,
    state_path: PathBuf,
    firewall: Firewall,
}

fn id_of(call: &str, body: &Value, key: &str) -> Result<String, PluginError> {
    let id = body.get(key).and_then(Value::as_str).unwrap_or("");
    if valid_id(id) {
        Ok(id.to_owned())
    } else {
        Err(PluginError::BadRequest {
            call: call.to_owned(),
            why: format!("{key} {id:?} is not a Docker id (12–64 hex digits)"),
        })
    }
}

fn option<'a>(body: &'a Value, key: &str) -> Option<&'a str> {
    body.get("Options")
        .and_then(|o| o.get(key))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

impl Driver {
    /// A driver whose state lives in `state_path` (read now if it exists).
    pub fn open(state_path: &Path, firewall: Firewall) -> Result<Self, PluginError> {
        Ok(Self {
            state: State::load(state_path)?,
            state_path: state_path.to_owned(),
            firewall,
        })
    }

    /// What the driver remembers.
    pub fn state(&self) -> &State {
        &self.state
    }

    fn save(&self) -> Result<(), PluginError> {
        self.state.save(&self.state_path)
    }

    /// Makes sure network `nid` has its bridge and rule, and remembers it.
    fn ensure_network(&mut self, nid: &str) -> Result<String, PluginError> {
        let br = bridge_name(nid);
        let existed = netlink::index(&br).is_some();
        netlink::ensure_bridge(&br)?;
        if let Err(e) = self.firewall.allow(&br) {
            // Docker calls no DeleteNetwork after a failed CreateNetwork: leave nothing behind.
            if !existed {
                let _ = netlink::delete(&br);
            }
            return Err(e);
        }
        if self
            .state
            .networks
            .insert(nid.to_owned(), br.clone())
            .is_none()
        {
            self.save()?;
        }
        Ok(br)
    }

    /// Answers one call: `path` is the HTTP path (`/NetworkDriver.Join`), `body` its JSON.
    pub fn handle(&mut self, path: &str, body: &[u8]) -> Result<Value, PluginError> {
        let call = path.trim_start_matches('/');
        let body: Value = if body.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(body).map_err(|e| PluginError::BadRequest {
                call: call.to_owned(),
                why: format!("body is not JSON: {e}"),
            })?
        };
        match call {
            "Plugin.Activate" => Ok(json!({"Implements": ["NetworkDriver"]})),
            "NetworkDriver.GetCapabilities" => {
                Ok(json!({"Scope": "local", "ConnectivityScope": "local"}))
            }
            "NetworkDriver.CreateNetwork" => {
                let nid = id_of(call, &body, "NetworkID")?;
                self.ensure_network(&nid)?;
                Ok(json!({}))
            }
            "NetworkDriver.DeleteNetwork" => {
                let nid = id_of(call, &body, "NetworkID")?;
                let br = bridge_name(&nid);
                netlink::delete(&br)?;
                self.firewall.revoke(&br);
                self.state.networks.remove(&nid);
                self.state.endpoints.retain(|_, e| e.network != nid);
                self.save()?;
                Ok(json!({}))
            }
            "NetworkDriver.CreateEndpoint" => self.create_endpoint(call, &body),
            "NetworkDriver.EndpointOperInfo" => {
                let eid = id_of(call, &body, "EndpointID")?;
                let ep = self.endpoint(&eid)?;
                Ok(json!({"Value": {
                    "mac_address": ep.mac,
                    "veth_outside": if ep.joined { host_veth(&eid) } else { String::new() },
                }}))
            }
            "NetworkDriver.DeleteEndpoint" => {
                let eid = id_of(call, &body, "EndpointID")?;
                netlink::delete(&host_veth(&eid))?;
                if self.state.endpoints.remove(&eid).is_some() {
                    self.save()?;
                }
                Ok(json!({}))
            }
            "NetworkDriver.Join" => self.join(call, &body),
            "NetworkDriver.Leave" => {
                let eid = id_of(call, &body, "EndpointID")?;
                netlink::delete(&host_veth(&eid))?;
                netlink::delete(&peer_veth(&eid))?;
                if let Some(ep) = self.state.endpoints.get_mut(&eid) {
                    ep.joined = false;
                    self.save()?;
                }
                Ok(json!({}))
            }
            "NetworkDriver.AllocateNetwork" => Ok(json!({"Options": {}})),
            "NetworkDriver.FreeNetwork"
            | "NetworkDriver.DiscoverNew"
            | "NetworkDriver.DiscoverDelete"
            | "NetworkDriver.ProgramExternalConnectivity"
            | "NetworkDriver.RevokeExternalConnectivity" => Ok(json!({})),
            other => Err(PluginError::UnknownCall(other.to_owned())),
        }
    }

    fn endpoint(&self, eid: &str) -> Result<&Endpoint, PluginError> {
        self.state
            .endpoints
            .get(eid)
            .ok_or_else(|| PluginError::NotFound {
                what: "endpoint",
                id: eid.to_owned(),
            })
    }

    fn create_endpoint(&mut self, call: &str, body: &Value) -> Result<Value, PluginError> {
        let nid = id_of(call, body, "NetworkID")?;
        let eid = id_of(call, body, "EndpointID")?;
        self.ensure_network(&nid)?;
        let given = body
            .get("Interface")
            .and_then(|i| i.get("MacAddress"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let bad = |why: String| PluginError::BadRequest {
            call: call.to_owned(),
            why,
        };
        // Docker's own MAC (`docker run --mac-address`) wins and must not be answered back.
        let (mac, answer) = if let Some(m) = given {
            (mac::parse(m).map_err(bad)?, false)
        } else if let Some(m) = option(body, "kathara.mac_addr") {
            (
                mac::parse(m).map_err(|e| bad(format!("kathara.mac_addr: {e}")))?,
                true,
            )
        } else if let (Some(machine), Some(iface)) = (
            option(body, "kathara.machine"),
            option(body, "kathara.iface"),
        ) {
            (mac::derive(&format!("{machine}-{iface}")), true)
        } else {
            (mac::derive(&format!("{nid}-{eid}")), true)
        };
        let text = mac::format(mac);
        self.state.endpoints.insert(
            eid,
            Endpoint {
                network: nid,
                mac: text.clone(),
                joined: false,
            },
        );
        self.save()?;
        Ok(if answer {
            json!({"Interface": {"MacAddress": text}})
        } else {
            json!({"Interface": null})
        })
    }

    fn join(&mut self, call: &str, body: &Value) -> Result<Value, PluginError> {
        let nid = id_of(call, body, "NetworkID")?;
        let eid = id_of(call, body, "EndpointID")?;
        let br = self.ensure_network(&nid)?;
        // An endpoint lost with the state gets the MAC it would have been given by default.
        let ep = self
            .state
            .endpoints
            .entry(eid.clone())
            .or_insert_with(|| Endpoint {
                network: nid.clone(),
                mac: mac::format(mac::derive(&format!("{nid}-{eid}"))),
                joined: false,
            });
        let m = mac::parse(&ep.mac).map_err(|why| PluginError::BadRequest {
            call: call.to_owned(),
            why,
        })?;
        netlink::veth_into_bridge(&host_veth(&eid), &peer_veth(&eid), m, &br)?;
        ep.joined = true;
        self.save()?;
        Ok(json!({
            "InterfaceName": {"SrcName": peer_veth(&eid), "DstPrefix": "eth"},
            "DisableGatewayService": true,
        }))
    }

    /// Serves `socket` until the process ends, one connection at a time (Docker serialises its
    /// calls per network anyway, and a single thread keeps the state consistent).
    pub fn serve(&mut self, socket: &Path) -> Result<(), PluginError> {
        let sock_err = |source| PluginError::Socket {
            path: socket.to_owned(),
            source,
        };
        // A socket left by an earlier run; anything else at that path is not ours to remove.
        if let Ok(md) = std::fs::symlink_metadata(socket)
            && md.file_type().is_socket()
        {
            std::fs::remove_file(socket).map_err(sock_err)?;
        }
        if let Some(dir) = socket.parent() {
            std::fs::create_dir_all(dir).map_err(sock_err)?;
        }
        let listener = UnixListener::bind(socket).map_err(sock_err)?;
        for conn in listener.incoming() {
            let Ok(conn) = conn else {
                // Out of descriptors or similar: back off rather than spin.
                std::thread::sleep(Duration::from_millis(100));
                continue;
            };
            let _ = conn.set_read_timeout(Some(READ_TIMEOUT));
            let req = match http::read_request(&conn) {
                Ok(r) => r,
                Err(e) => {
                    let _ = http::write_response(
                        &conn,
                        400,
                        json!({"Err": e.to_string()}).to_string().as_bytes(),
                    );
                    continue;
                }
            };
            let (status, answer) = match self.handle(&req.path, &req.body) {
                Ok(v) => (200, v),
                Err(e) => {
                    eprintln!("faultbench-netplugin: {} failed: {e}", req.path);
                    (500, json!({"Err": e.to_string()}))
                }
            };
            let _ = http::write_response(&conn, status, answer.to_string().as_bytes());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver() -> (tempfile::TempDir, Driver) {
        let d = tempfile::tempdir().unwrap();
        let drv = Driver::open(
            &d.path().join("state.json"),
            Firewall {
                binaries: Vec::new(),
            },
        )
        .unwrap();
        (d, drv)
    }

    #[test]
    fn handshake_and_capabilities_need_no_kernel() {
        let (_d, mut drv) = driver();
        let a = drv.handle("/Plugin.Activate", b"").unwrap();
        assert_eq!(a["Implements"][0], "NetworkDriver");
        let c = drv.handle("/NetworkDriver.GetCapabilities", b"{}").unwrap();
        assert_eq!(c["Scope"], "local");
    }

    #[test]
    fn hostile_ids_and_unknown_calls_are_refused_before_any_kernel_change() {
        let (_d, mut drv) = driver();
        for id in ["../../../etc", "0123", "zzzzzzzzzzzzzzzz", ""] {
            let body = json!({"NetworkID": id}).to_string();
            let e = drv
                .handle("/NetworkDriver.CreateNetwork", body.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.contains("not a Docker id"), "{e}");
        }
        assert!(drv.handle("/NetworkDriver.Nope", b"{}").is_err());
        assert!(drv.handle("/NetworkDriver.CreateNetwork", b"{").is_err());
        assert!(drv.state().networks.is_empty());
    }

    #[test]
    fn names_fit_the_kernel_limit() {
        let id = "0123456789abcdef0123456789abcdef";
        for n in [bridge_name(id), host_veth(id), peer_veth(id)] {
            assert_eq!(n.len(), 15, "{n}");
        }
    }
}
