//! An emulator wrapper that remembers every lab it deployed, so that an interrupted benchmark
//! (Ctrl-C, a fatal error) can tear down every lab still alive, whoever holds it.

use crate::emulator::{EmuError, Emulator, Lab, LabRequest};
use std::sync::{Arc, Mutex, Weak};

/// Wraps an emulator; [`TrackingEmulator::teardown_all`] tears down every lab it deployed that
/// is still alive. Teardown is idempotent, so labs already torn down are unaffected.
pub struct TrackingEmulator {
    inner: Arc<dyn Emulator>,
    labs: Mutex<Vec<Weak<dyn Lab>>>,
}

impl TrackingEmulator {
    /// Starts tracking around `inner`.
    pub fn new(inner: Arc<dyn Emulator>) -> Self {
        TrackingEmulator {
            inner,
            labs: Mutex::new(Vec::new()),
        }
    }

    /// Labs deployed and still referenced somewhere.
    pub fn alive(&self) -> Vec<Arc<dyn Lab>> {
        let mut labs = self.labs.lock().unwrap_or_else(|e| e.into_inner());
        labs.retain(|w| w.strong_count() > 0);
        labs.iter().filter_map(Weak::upgrade).collect()
    }

    /// Tears down every live lab; returns how many were torn down and the errors.
    pub async fn teardown_all(&self) -> (usize, Vec<EmuError>) {
        let labs = self.alive();
        let n = labs.len();
        let results = futures_util::future::join_all(labs.iter().map(|l| l.teardown())).await;
        (n, results.into_iter().filter_map(Result::err).collect())
    }
}

#[async_trait::async_trait]
impl Emulator for TrackingEmulator {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn link_model(&self) -> Option<crate::emulator::LinkModel> {
        self.inner.link_model()
    }

    fn defer_teardowns(&self) -> bool {
        self.inner.defer_teardowns()
    }

    async fn flush_teardowns(&self) -> Vec<EmuError> {
        self.inner.flush_teardowns().await
    }

    async fn deploy(&self, request: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
        let lab = self.inner.deploy(request).await?;
        self.labs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(&lab));
        Ok(lab)
    }
}
