//! Registries: names → agents, judges and emulators.
//!
//! The CLI never matches on a closed list of names: `--agents`, `--judge` and `--emulator` are
//! looked up in a [`Registry`], which holds one factory per name. The built-in crates fill one
//! each (`faultbench_agents::registry::builtin_agents`, `faultbench_judge::registry::
//! builtin_judges`, `faultbench_emu::registry::builtin_emulators`); a user's program adds its
//! own in a line and gets every name-driven feature for them:
//!
//! ```
//! use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
//! use faultbench_core::registry::Registry;
//! use faultbench_core::toolbox::Toolbox;
//! use std::sync::Arc;
//!
//! struct Mine;
//! #[async_trait::async_trait]
//! impl Agent for Mine {
//!     fn name(&self) -> &str { "mine" }
//!     async fn run(&self, _: &AgentInput, _: Arc<dyn Toolbox>) -> AgentOutcome {
//!         AgentOutcome::answer("=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\ndiagnosis_text:\nok\n=== END ===")
//!     }
//! }
//!
//! // Options are whatever the factories need (the agents crate uses its `AgentOptions`).
//! let mut agents: Registry<dyn Agent, ()> = Registry::new("agent");
//! agents.agent("mine", || Mine);
//! assert_eq!(agents.build("mine", &()).unwrap().name(), "mine");
//! let e = agents.build("yours", &()).err().unwrap();
//! assert_eq!(e.to_string(), "unknown agent `yours`; choose one of: mine");
//! ```
//!
//! A *family* answers every name `PREFIX:REST` (the agents crate registers `external` so that
//! `external:NAME` builds the external agent with template `NAME`).

use crate::agent::Agent;
use crate::emulator::Emulator;
use crate::judge::{BoxError, Judge};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Builds one `T` from the options `O`.
pub type Factory<T, O> = Arc<dyn Fn(&O) -> Result<Arc<T>, BoxError> + Send + Sync>;

/// Builds one `T` of a family from the rest of its name (`NAME` in `external:NAME`).
pub type FamilyFactory<T, O> = Arc<dyn Fn(&str, &O) -> Result<Arc<T>, BoxError> + Send + Sync>;

/// Why a name could not be turned into a value.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No factory answers the name.
    #[error("unknown {what} `{name}`; choose one of: {}", known.join(", "))]
    Unknown {
        /// What the registry holds (`agent`, `judge`, `emulator`).
        what: &'static str,
        /// The name asked for.
        name: String,
        /// Every name it knows (families as `PREFIX:NAME`).
        known: Vec<String>,
    },
    /// The factory failed (a missing key, a bad template, a host without namespaces…).
    #[error("{what} `{name}`: {source}")]
    Build {
        /// What the registry holds.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The factory's error.
        #[source]
        source: BoxError,
    },
}

/// Named factories of `T` (`dyn Agent`, `dyn Judge`, `dyn Emulator`), built with options `O`.
pub struct Registry<T: ?Sized, O> {
    what: &'static str,
    named: BTreeMap<String, Factory<T, O>>,
    families: BTreeMap<String, FamilyFactory<T, O>>,
}

impl<T: ?Sized, O> Clone for Registry<T, O> {
    fn clone(&self) -> Self {
        Registry {
            what: self.what,
            named: self.named.clone(),
            families: self.families.clone(),
        }
    }
}

impl<T: ?Sized, O> fmt::Debug for Registry<T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("what", &self.what)
            .field("names", &self.names())
            .finish()
    }
}

impl<T: ?Sized, O> Registry<T, O> {
    /// An empty registry of `what` (`agent`, `judge`, …; used in messages).
    pub fn new(what: &'static str) -> Self {
        Registry {
            what,
            named: BTreeMap::new(),
            families: BTreeMap::new(),
        }
    }

    /// Registers (or replaces) the factory of `name`.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        make: impl Fn(&O) -> Result<Arc<T>, BoxError> + Send + Sync + 'static,
    ) -> &mut Self {
        self.named.insert(name.into(), Arc::new(make));
        self
    }

    /// Registers (or replaces) the family `prefix`: every name `prefix:REST` (REST not empty)
    /// is built by `make(REST, options)`.
    pub fn register_family(
        &mut self,
        prefix: impl Into<String>,
        make: impl Fn(&str, &O) -> Result<Arc<T>, BoxError> + Send + Sync + 'static,
    ) -> &mut Self {
        self.families.insert(prefix.into(), Arc::new(make));
        self
    }

    /// Whether `name` would be answered by a factory (it may still fail to build).
    pub fn contains(&self, name: &str) -> bool {
        self.lookup(name.trim()).is_some()
    }

    /// Every name, sorted; families as `PREFIX:NAME`.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.named.keys().cloned().collect();
        v.extend(self.families.keys().map(|p| format!("{p}:NAME")));
        v.sort();
        v
    }

    /// Builds the value named `name` (surrounding spaces ignored). An exact name wins over a
    /// family.
    pub fn build(&self, name: &str, options: &O) -> Result<Arc<T>, RegistryError> {
        let name = name.trim();
        let built = match self.lookup(name) {
            Some(Entry::Named(f)) => f(options),
            Some(Entry::Family(f, rest)) => f(rest, options),
            None => {
                return Err(RegistryError::Unknown {
                    what: self.what,
                    name: name.to_string(),
                    known: self.names(),
                });
            }
        };
        built.map_err(|source| RegistryError::Build {
            what: self.what,
            name: name.to_string(),
            source,
        })
    }

    fn lookup<'a>(&'a self, name: &'a str) -> Option<Entry<'a, T, O>> {
        if let Some(f) = self.named.get(name) {
            return Some(Entry::Named(f));
        }
        let (prefix, rest) = name.split_once(':')?;
        let f = self.families.get(prefix)?;
        (!rest.trim().is_empty()).then_some(Entry::Family(f, rest.trim()))
    }
}

enum Entry<'a, T: ?Sized, O> {
    Named(&'a Factory<T, O>),
    Family(&'a FamilyFactory<T, O>, &'a str),
}

impl<O> Registry<dyn Agent, O> {
    /// Registers an agent that needs no options: `registry.agent("mine", || MyAgent::new())`.
    pub fn agent<A: Agent + 'static>(
        &mut self,
        name: impl Into<String>,
        make: impl Fn() -> A + Send + Sync + 'static,
    ) -> &mut Self {
        self.register(name, move |_| Ok(Arc::new(make()) as Arc<dyn Agent>))
    }
}

impl<O> Registry<dyn Judge, O> {
    /// Registers a judge that needs no options: `registry.judge("strict", || MyJudge)`.
    pub fn judge<J: Judge + 'static>(
        &mut self,
        name: impl Into<String>,
        make: impl Fn() -> J + Send + Sync + 'static,
    ) -> &mut Self {
        self.register(name, move |_| Ok(Arc::new(make()) as Arc<dyn Judge>))
    }
}

impl<O> Registry<dyn Emulator, O> {
    /// Registers an emulator that needs no options.
    pub fn emulator<E: Emulator + 'static>(
        &mut self,
        name: impl Into<String>,
        make: impl Fn() -> E + Send + Sync + 'static,
    ) -> &mut Self {
        self.register(name, move |_| Ok(Arc::new(make()) as Arc<dyn Emulator>))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_families_and_errors() {
        let mut r: Registry<str, u32> = Registry::new("word");
        r.register("one", |n| Ok(Arc::from(format!("one×{n}").as_str())));
        r.register_family("say", |rest, _| Ok(Arc::from(rest)));
        r.register("say:exact", |_| Err("refused".into()));
        assert_eq!(r.names(), ["one", "say:NAME", "say:exact"]);
        assert_eq!(&*r.build(" one ", &3).unwrap(), "one×3");
        assert_eq!(&*r.build("say:hello", &0).unwrap(), "hello");
        assert!(r.contains("say:x") && !r.contains("say:") && !r.contains("two"));
        // An exact name wins over its family.
        let e = r.build("say:exact", &0).unwrap_err();
        assert_eq!(e.to_string(), "word `say:exact`: refused");
        assert_eq!(
            std::error::Error::source(&e).unwrap().to_string(),
            "refused"
        );
        let e = r.build("say:", &0).unwrap_err();
        assert!(matches!(e, RegistryError::Unknown { ref name, .. } if name == "say:"));
    }
}
