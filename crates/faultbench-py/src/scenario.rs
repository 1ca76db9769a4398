//! Scenarios and datasets: `faultbench.load_scenario`, `faultbench.load_dataset`,
//! `faultbench.Scenario`, `faultbench.Dataset`.

use crate::errors::{ScenarioError, chain};
use faultbench_core::dataset::{Dataset, Scope};
use faultbench_core::scenario::{Scenario, ScenarioFile, ScenarioSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Arc;

/// One scenario (a file of the release's format): its ticket, ground truth, category, layer,
/// topology and scoring axes.
#[pyclass(name = "Scenario", module = "faultbench", frozen)]
#[derive(Clone)]
pub struct PyScenario {
    pub(crate) inner: Arc<ScenarioFile>,
}

impl PyScenario {
    /// Wraps any scenario (a copy of its parsed form and path).
    pub fn of(s: &dyn Scenario) -> Self {
        PyScenario {
            inner: Arc::new(ScenarioFile {
                path: s.path().map(PathBuf::from).unwrap_or_default(),
                spec: s.spec().clone(),
            }),
        }
    }
}

#[pymethods]
impl PyScenario {
    /// Parses a scenario from its text (errors name the line).
    #[staticmethod]
    fn parse(text: &str) -> PyResult<Self> {
        let spec = ScenarioSpec::parse(text).map_err(|e| ScenarioError::new_err(chain(&e)))?;
        Ok(PyScenario {
            inner: Arc::new(ScenarioFile {
                path: PathBuf::new(),
                spec,
            }),
        })
    }
    /// The scenario id (`Scenario:` header).
    #[getter]
    fn id(&self) -> &str {
        self.inner.id()
    }
    /// The topology name (`Topology:` header).
    #[getter]
    fn topology(&self) -> &str {
        self.inner.topology()
    }
    /// The category: `correct_fault`, `false_premise`, `wrong_device` or `wrong_cause`.
    #[getter]
    fn category(&self) -> String {
        self.inner.category().as_str().to_string()
    }
    /// The dataset layer: `base`, `cex` or a persona (`novice`, `naive`, …).
    #[getter]
    fn layer(&self) -> String {
        self.inner.layer().as_str().to_string()
    }
    /// The fault family header (`unspecified` when absent).
    #[getter]
    fn fault_family(&self) -> &str {
        self.inner.fault_family()
    }
    /// The ticket: the only text the agent sees besides the topology summary.
    #[getter]
    fn ticket(&self) -> &str {
        self.inner.ticket()
    }
    /// The `[GROUND-TRUTH]` section.
    #[getter]
    fn ground_truth(&self) -> &str {
        self.inner.ground_truth()
    }
    /// The `[FIX]` section, or `None` (never for false premises).
    #[getter]
    fn fix(&self) -> Option<&str> {
        self.inner.fix()
    }
    /// The scoring axes as dicts `{"axis", "kind", "argument"}`; `kind` is `assert`, `must`,
    /// `bonus` or `reason-dim`.
    #[getter]
    fn axes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .scoring_axes()
            .iter()
            .map(|a| {
                let d = PyDict::new(py);
                d.set_item("axis", &a.raw)?;
                d.set_item("kind", a.kind().as_str())?;
                d.set_item("argument", a.argument())?;
                Ok(d)
            })
            .collect()
    }
    /// The file it was read from, or `None` for a parsed text.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        let p = &self.inner.path;
        (!p.as_os_str().is_empty()).then(|| p.clone())
    }
    /// The scenario in the release's file format.
    fn to_text(&self) -> String {
        self.inner.spec.to_text()
    }
    fn __repr__(&self) -> String {
        format!(
            "Scenario(id={:?}, topology={:?}, category={:?}, layer={:?})",
            self.inner.id(),
            self.inner.topology(),
            self.inner.category().as_str(),
            self.inner.layer().as_str()
        )
    }
}

/// Reads and parses one scenario file. Raises `ScenarioError` with `file:line` on a bad file.
#[pyfunction]
pub fn load_scenario(path: PathBuf) -> PyResult<PyScenario> {
    let file = ScenarioFile::load(&path).map_err(|e| ScenarioError::new_err(chain(&e)))?;
    Ok(PyScenario {
        inner: Arc::new(file),
    })
}

/// A dataset folder (`<topo>_Q/<layer>/*.txt`, or one `<topo>_Q` folder): its scenarios in
/// the release's order, and the files that failed to parse.
#[pyclass(name = "Dataset", module = "faultbench", frozen)]
pub struct PyDataset {
    inner: Dataset,
}

#[pymethods]
impl PyDataset {
    /// The dataset's root folder.
    #[getter]
    fn root(&self) -> PathBuf {
        self.inner.root.clone()
    }
    /// Every parsed scenario, in path order.
    #[getter]
    fn scenarios(&self) -> Vec<PyScenario> {
        self.inner
            .scenarios()
            .map(|(_, s)| PyScenario {
                inner: Arc::new(s.clone()),
            })
            .collect()
    }
    /// Why files failed to parse, one message each (`file:line: what`).
    #[getter]
    fn errors(&self) -> Vec<String> {
        self.inner.errors().map(|e| chain(e)).collect()
    }
    /// Files or folders that do not fit the dataset layout.
    #[getter]
    fn misplaced(&self) -> Vec<PathBuf> {
        self.inner.misplaced.clone()
    }
    /// The scenarios of a scope (`all` = the 25 core per topology: base then cex; or a layer
    /// name), optionally of one topology (`Kath2`, `kath2_Q`, …).
    #[pyo3(signature = (scope = "all", topology = None))]
    fn select(&self, scope: &str, topology: Option<&str>) -> PyResult<Vec<PyScenario>> {
        let scope: Scope = scope
            .parse()
            .map_err(|e: faultbench_core::category::UnknownName| {
                crate::errors::ConfigError::new_err(e.to_string())
            })?;
        Ok(self
            .inner
            .select(scope, topology)
            .into_iter()
            .map(|s| PyScenario {
                inner: Arc::new(s.clone()),
            })
            .collect())
    }
    fn __len__(&self) -> usize {
        self.inner.scenarios().count()
    }
    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<Bound<'_, PyAny>> {
        let py = slf.py();
        let list = pyo3::types::PyList::new(py, slf.scenarios())?;
        list.try_iter().map(Bound::into_any)
    }
}

/// Scans a dataset folder. Files that fail to parse do not raise: they are listed in
/// `Dataset.errors` (call `validate` to raise on them).
#[pyfunction]
pub fn load_dataset(path: PathBuf) -> PyResult<PyDataset> {
    let inner = Dataset::scan(&path).map_err(|e| {
        ScenarioError::new_err(format!("cannot read the dataset {}: {e}", path.display()))
    })?;
    Ok(PyDataset { inner })
}

/// Checks a scenario file or a dataset folder; raises `ScenarioError` listing every problem
/// (`file:line: what`), returns the number of scenarios when all parse.
#[pyfunction]
pub fn validate(path: PathBuf) -> PyResult<usize> {
    if path.is_file() {
        return load_scenario(path).map(|_| 1);
    }
    let ds = load_dataset(path.clone())?;
    let mut problems: Vec<String> = ds.errors();
    problems.extend(ds.inner.misplaced.iter().map(|p| {
        format!(
            "{}: not in the dataset layout <topo>_Q/<layer>/*.txt",
            p.display()
        )
    }));
    if problems.is_empty() {
        Ok(ds.__len__())
    } else {
        Err(ScenarioError::new_err(format!(
            "{} problem(s) in {}:\n{}",
            problems.len(),
            path.display(),
            problems.join("\n")
        )))
    }
}
