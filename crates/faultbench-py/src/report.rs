//! `faultbench.report(runs_root)`: the paper's tables of a runs root as plain Python data (a
//! list of row dicts, and a pandas DataFrame when pandas is installed), the Markdown, and the
//! HTML report written next to the runs.

use crate::convert;
use crate::errors::{FaultbenchError, chain};
use faultbench_report::{Report, ReportOptions, RunIndex};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::path::PathBuf;

/// A computed report.
#[pyclass(name = "Report", module = "faultbench", frozen)]
pub struct PyReport {
    report: Report,
    html_path: Option<PathBuf>,
}

/// One CSV cell as a number when it is one, else as text; empty is `None`.
fn cell(s: &str) -> Value {
    if s.is_empty() {
        return Value::Null;
    }
    s.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or_else(|| Value::String(s.to_string()), Value::Number)
}

#[pymethods]
impl PyReport {
    /// Every table as rows `{"table", "row", "agent", "value", "sd", "delta", "n", "num",
    /// "den"}` (numbers as float, missing as `None`).
    #[getter]
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let csv = self.report.csv();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let headers = reader
            .headers()
            .map_err(|e| FaultbenchError::new_err(e.to_string()))?
            .clone();
        let mut out = Vec::new();
        for rec in reader.records() {
            let rec = rec.map_err(|e| FaultbenchError::new_err(e.to_string()))?;
            let d = PyDict::new(py);
            for (h, v) in headers.iter().zip(rec.iter()) {
                let v = if matches!(h, "table" | "row" | "agent") {
                    Value::String(v.to_string())
                } else {
                    cell(v)
                };
                d.set_item(h, convert::to_py(py, &v)?)?;
            }
            out.push(d);
        }
        Ok(out)
    }
    /// Every table and analysis as nested dicts (what `report.json` holds).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: Value = serde_json::from_str(&self.report.json()).unwrap_or_default();
        convert::to_py(py, &v)
    }
    /// The report in Markdown.
    #[getter]
    fn markdown(&self) -> String {
        self.report.markdown()
    }
    /// The HTML report's path (when written).
    #[getter]
    fn html_path(&self) -> Option<PathBuf> {
        self.html_path.clone()
    }
    /// Rows that could not be read, with reasons.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.report.warnings.clone()
    }
    /// The rows as a pandas DataFrame (raises ImportError without pandas).
    fn dataframe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = py.import("pandas")?;
        pandas.getattr("DataFrame")?.call1((self.rows(py)?,))
    }
    fn __repr__(&self) -> String {
        format!(
            "Report({}, html={:?})",
            self.report.source.display(),
            self.html_path
        )
    }
}

/// Reads a runs root (or a `MANIFEST.csv`) and computes the tables. Writes `report.html` (and
/// the Markdown, CSV, JSON and SVG charts) into `out_dir` (default `<runs_root>/report`)
/// unless `write=False`.
#[pyfunction]
#[pyo3(signature = (runs_root, *, out_dir = None, write = true))]
pub fn report(
    py: Python<'_>,
    runs_root: PathBuf,
    out_dir: Option<PathBuf>,
    write: bool,
) -> PyResult<PyReport> {
    py.detach(|| {
        let index = RunIndex::load(&runs_root).map_err(|e| FaultbenchError::new_err(chain(&e)))?;
        let (opts, _) = ReportOptions::tables_only().with_records(&runs_root);
        let report = Report::with_options(&index, None, &opts);
        let html_path =
            if write {
                // A folder the caller named is used as given; the default `report/` is derived from
                // the runs root, and a link planted there is refused, never written through.
                let (base, below) = match out_dir {
                    Some(dir) => (dir, ""),
                    None if runs_root.is_dir() => (runs_root.clone(), "report"),
                    None => (
                        runs_root.parent().map(PathBuf::from).unwrap_or_default(),
                        "report",
                    ),
                };
                let written = faultbench_core::output::OutputDir::open(&base, below)
                    .and_then(|dir| report.write_into(&dir));
                Some(written.map_err(|e| {
                    FaultbenchError::new_err(format!("cannot write the report: {e}"))
                })?)
            } else {
                None
            };
        Ok(PyReport { report, html_path })
    })
}

impl PyReport {
    /// The HTML path, owned.
    pub fn html_path_owned(&self) -> Option<PathBuf> {
        self.html_path.clone()
    }
}
