//! The index of a runs root's runs, one [`ManifestRow`] per run, that every report is computed
//! from: read from a run registry (the public release's `MANIFEST.csv` or one written by
//! `faultbench bench`, same columns), or, when a runs root has no registry, from its
//! `result.json` files.

use faultbench_core::record::{
    MANIFEST_EXTRA_COLUMNS, ManifestRow, RELEASE_MANIFEST_HEADER, scan_records,
};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A run index that could not be read: where, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {problem}", path.display())]
pub struct RunIndexError {
    /// The file (or the runs root).
    pub path: PathBuf,
    /// 1-based line (0 = whole file).
    pub line: usize,
    /// What is wrong.
    #[source]
    pub problem: RunIndexProblem,
}

/// What is wrong with a registry or runs root ([`RunIndexError`] says where).
#[derive(Debug, thiserror::Error)]
pub enum RunIndexProblem {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Read(#[source] std::io::Error),
    /// The file is larger than [`MAX_REGISTRY_BYTES`].
    #[error("{0} bytes; a registry is at most {MAX_REGISTRY_BYTES} bytes")]
    TooLarge(u64),
    /// The file grew past [`MAX_REGISTRY_BYTES`] while it was read.
    #[error("over {MAX_REGISTRY_BYTES} bytes; a registry is at most that")]
    GrewTooLarge,
    /// No header line.
    #[error("empty registry")]
    Empty,
    /// The header is not CSV.
    #[error(transparent)]
    HeaderCsv(csv::Error),
    /// The header does not start with the release's columns.
    #[error(
        "unexpected header; expected `{RELEASE_MANIFEST_HEADER}` (optionally followed by more columns)"
    )]
    Header,
    /// A row (not the last one) cannot be read.
    #[error(transparent)]
    Row(#[from] ManifestRowError),
    /// A folder with neither a registry nor run records.
    #[error("no MANIFEST.csv and no result.json below this folder")]
    NoRuns,
    /// More rows than [`MAX_REGISTRY_ROWS`].
    #[error(
        "more than {MAX_REGISTRY_ROWS} runs; a report reads at most that many (split the runs over several roots and compare them)"
    )]
    TooManyRows,
    /// More distinct agents than [`MAX_REPORT_AGENTS`].
    #[error(
        "more than {MAX_REPORT_AGENTS} distinct agents; a report has at most that many columns (split the runs over several roots)"
    )]
    TooManyAgents,
}

/// A registry row that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestRowError {
    /// Nothing to read.
    #[error("empty line")]
    Empty,
    /// Not CSV (e.g. an unterminated quote).
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// Another number of fields than the header has.
    #[error("{found} fields, expected {expected}")]
    Width {
        /// Fields in the row.
        found: usize,
        /// Columns in the header.
        expected: usize,
    },
    /// A count column holds something else than a non-negative integer.
    #[error("field {field} (`{column}`) `{value}` is not a count")]
    NotACount {
        /// 1-based field number.
        field: usize,
        /// The column's name.
        column: &'static str,
        /// The value (cut to 60 characters).
        value: String,
    },
    /// A number column holds an unusable value.
    #[error("field {field} ({column}): {problem}")]
    BadNumber {
        /// 1-based field number.
        field: usize,
        /// The column's name.
        column: &'static str,
        /// What is wrong with it.
        problem: NumberProblem,
    },
}

/// Why a number field is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NumberProblem {
    /// Not a number at all (the value, cut to 60 characters).
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// `NaN`, `inf`, or a literal that overflows (`1e400`): they would poison every mean they
    /// enter.
    #[error("`{0}` is not a finite number")]
    NotFinite(String),
    /// A negative amount (spend, time).
    #[error("`{0}` is negative")]
    Negative(f64),
}

/// The rows of a run registry, with notes about anything skipped.
#[derive(Debug, Clone, Default)]
pub struct RunIndex {
    /// Where the rows came from.
    pub source: PathBuf,
    /// One row per run.
    pub rows: Vec<ManifestRow>,
    /// Lines that were skipped (e.g. a torn last line after a crash), with reasons.
    pub warnings: Vec<String>,
    /// How the runs were made, from the `result.json` files beside the registry (runs roots
    /// written by `faultbench bench`).
    pub notes: Option<super::RunNotes>,
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim() {
        "True" | "true" | "1" => Some(true),
        "False" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// A finite number (`NaN`, `inf` and overflowing literals such as `1e400` are refused: they
/// would poison every mean they enter).
fn parse_f64(s: &str) -> Result<f64, NumberProblem> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(NumberProblem::NotFinite(cut(s))),
        Err(_) => Err(NumberProblem::NotANumber(cut(s))),
    }
}

fn parse_opt_f64(s: &str) -> Result<Option<f64>, NumberProblem> {
    let s = s.trim();
    if s.is_empty() {
        Ok(None)
    } else {
        parse_f64(s).map(Some)
    }
}

/// A field value quoted in an error: its first 60 characters and how much was left out.
fn cut(s: &str) -> String {
    faultbench_core::text::excerpt(s, 60).into_owned()
}

/// Largest registry read (the release's 3,960 runs take 0.65 MB).
pub const MAX_REGISTRY_BYTES: u64 = 256 * 1024 * 1024;

/// Most runs a report reads: 500 times the release's 3,960. A run takes about 0.65 KB of
/// memory in a report (its row, and its share of one table's statistics): a report over a
/// million runs peaks at about 670 MB (`scripts/report-bounds.sh`).
pub const MAX_REGISTRY_ROWS: usize = 2_000_000;

/// Most distinct agents a report shows (its tables have one column per agent): far more than
/// any comparison of agents, and few enough that every table stays readable and cheap.
pub const MAX_REPORT_AGENTS: usize = 1_000;

/// Longest text field of a registry row kept when read, in characters (agent, model, scenario
/// id, …; real ones are under a hundred). A longer value is kept as its first 130 and last 80
/// characters around `…(N bytes, #hash)…` (at most 41 characters), the hash telling apart
/// values that share both ends, and a warning names the line: every table, chart and export
/// then repeats at most this much.
pub const MAX_FIELD_CHARS: usize = 256;

/// Warnings about cut fields listed one by one; the rest are counted in one more warning.
const MAX_CUT_WARNINGS: usize = 20;

/// `s` kept as [`MAX_FIELD_CHARS`] describes, or `None` when it is short enough.
fn bounded_field(s: &str) -> Option<String> {
    const HEAD: usize = 130;
    const TAIL: usize = 80;
    let chars = s.chars().count();
    if chars <= MAX_FIELD_CHARS {
        return None;
    }
    let head_end = s.char_indices().nth(HEAD).map_or(s.len(), |(i, _)| i);
    let tail_start = s
        .char_indices()
        .nth(chars - TAIL)
        .map_or(s.len(), |(i, _)| i);
    let hash = faultbench_core::identity::content_hash(&[s.as_bytes()]);
    Some(format!(
        "{}…({} bytes, #{})…{}",
        &s[..head_end],
        s.len(),
        &hash[..8],
        &s[tail_start..]
    ))
}

/// Cuts a row's text fields to [`MAX_FIELD_CHARS`]; the names of the fields cut.
fn bound_row(r: &mut ManifestRow) -> Vec<&'static str> {
    let mut cut = Vec::new();
    for (name, field) in [
        ("arm", &mut r.arm),
        ("pass", &mut r.pass),
        ("topology", &mut r.topology),
        ("scenario_id", &mut r.scenario_id),
        ("agent", &mut r.agent),
        ("model", &mut r.model),
        ("status", &mut r.status),
    ] {
        if let Some(short) = bounded_field(field) {
            *field = short;
            cut.push(name);
        }
    }
    cut
}

/// Applies the caps on rows, agents and field lengths as rows are added to an index.
struct Limits {
    max_rows: usize,
    max_agents: usize,
    agents: std::collections::HashSet<String>,
    cut_rows: usize,
}

impl Limits {
    fn new() -> Limits {
        Limits::with_caps(MAX_REGISTRY_ROWS, MAX_REPORT_AGENTS)
    }

    fn with_caps(max_rows: usize, max_agents: usize) -> Limits {
        Limits {
            max_rows,
            max_agents,
            agents: std::collections::HashSet::new(),
            cut_rows: 0,
        }
    }

    /// Adds `row` (found at `where_`, e.g. `MANIFEST.csv:12`) to `index`, or says which cap it
    /// passes.
    fn push(
        &mut self,
        index: &mut RunIndex,
        mut row: ManifestRow,
        where_: impl FnOnce() -> String,
    ) -> Result<(), RunIndexProblem> {
        if index.rows.len() >= self.max_rows {
            return Err(RunIndexProblem::TooManyRows);
        }
        let cut = bound_row(&mut row);
        if !cut.is_empty() {
            self.cut_rows += 1;
            if self.cut_rows <= MAX_CUT_WARNINGS {
                index.warnings.push(format!(
                    "{}: {} longer than {MAX_FIELD_CHARS} characters, kept cut",
                    where_(),
                    cut.join(", ")
                ));
            }
        }
        if !self.agents.contains(&row.agent) {
            if self.agents.len() >= self.max_agents {
                return Err(RunIndexProblem::TooManyAgents);
            }
            self.agents.insert(row.agent.clone());
        }
        index.rows.push(row);
        Ok(())
    }

    fn finish(self, index: &mut RunIndex) {
        if self.cut_rows > MAX_CUT_WARNINGS {
            index.warnings.push(format!(
                "… and {} more rows with fields longer than {MAX_FIELD_CHARS} characters, kept cut",
                self.cut_rows - MAX_CUT_WARNINGS
            ));
        }
    }
}

impl RunIndex {
    /// Reads a `MANIFEST.csv` with the `csv` crate (quoted commas, quotes and newlines are
    /// values). A malformed row in the middle is an error (with its line); a malformed or
    /// unterminated *last* row (a write torn by a crash) is skipped with a warning.
    pub fn load_csv(path: &Path) -> Result<RunIndex, RunIndexError> {
        let err = |problem: RunIndexProblem| RunIndexError {
            path: path.to_path_buf(),
            line: 0,
            problem,
        };
        let read = |e| err(RunIndexProblem::Read(e));
        // A regular file only: a FIFO named MANIFEST.csv is refused, not waited on.
        let file = faultbench_core::fsutil::open_regular(path)
            .map_err(|e| read(std::io::Error::from(e)))?;
        let len = file.metadata().map_err(read)?.len();
        if len > MAX_REGISTRY_BYTES {
            return Err(err(RunIndexProblem::TooLarge(len)));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        file.take(MAX_REGISTRY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read)?;
        if bytes.len() as u64 > MAX_REGISTRY_BYTES {
            return Err(err(RunIndexProblem::GrewTooLarge));
        }
        RunIndex::from_csv_bytes(&bytes, path)
    }

    /// Reads a registry's bytes (as [`RunIndex::load_csv`] does a file); `path` names it in
    /// errors and warnings.
    pub fn from_csv_bytes(bytes: &[u8], path: &Path) -> Result<RunIndex, RunIndexError> {
        RunIndex::parse_csv(bytes, path, Limits::new())
    }

    fn parse_csv(bytes: &[u8], path: &Path, mut limits: Limits) -> Result<RunIndex, RunIndexError> {
        let err = |line: usize, problem: RunIndexProblem| RunIndexError {
            path: path.to_path_buf(),
            line,
            problem,
        };
        let body = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let ends_clean = body.ends_with(b"\n");
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(body);
        let mut records = rdr.records();
        let header = match records.next() {
            None => return Err(err(1, RunIndexProblem::Empty)),
            Some(Err(e)) => return Err(err(1, RunIndexProblem::HeaderCsv(e))),
            Some(Ok(h)) => h,
        };
        let cols: Vec<&str> = header.iter().collect();
        let columns = Columns::of(&cols).ok_or_else(|| err(1, RunIndexProblem::Header))?;
        let mut reg = RunIndex {
            source: path.to_path_buf(),
            ..Default::default()
        };
        // One row per line at most: reserve once rather than double (and copy) a vector of a
        // million rows.
        let lines = body.iter().filter(|b| **b == b'\n').count();
        reg.rows.reserve_exact(lines.min(limits.max_rows));
        let mut next = records.next();
        while let Some(current) = next {
            next = records.next();
            let last = next.is_none();
            let (line, parsed) = match current {
                Ok(rec) => (
                    rec.position().map(|p| p.line() as usize).unwrap_or(0),
                    row_of(&rec, &columns),
                ),
                Err(e) => (
                    e.position().map(|p| p.line() as usize).unwrap_or(0),
                    Err(ManifestRowError::Csv(e)),
                ),
            };
            match parsed {
                Ok(row) if !last || ends_clean => limits
                    .push(&mut reg, row, || format!("{}:{line}", path.display()))
                    .map_err(|p| err(line, p))?,
                Ok(_) => reg.warnings.push(format!(
                    "{}:{line}: last line has no newline (torn write?); skipped",
                    path.display(),
                )),
                Err(m) if last => reg.warnings.push(format!(
                    "{}:{line}: torn last line skipped ({m})",
                    path.display(),
                )),
                Err(m) => return Err(err(line, m.into())),
            }
        }
        limits.finish(&mut reg);
        Ok(reg)
    }

    /// Reads a runs root: its `MANIFEST.csv` if present, otherwise every `result.json` in it.
    pub fn load_runs_root(root: &Path) -> Result<RunIndex, RunIndexError> {
        let manifest = root.join("MANIFEST.csv");
        if manifest.is_file() {
            return RunIndex::load_csv(&manifest);
        }
        let (records, bad) = scan_records(root);
        if records.is_empty() && bad.is_empty() {
            return Err(RunIndexError {
                path: root.to_path_buf(),
                line: 0,
                problem: RunIndexProblem::NoRuns,
            });
        }
        let mut index = RunIndex {
            source: root.to_path_buf(),
            rows: Vec::new(),
            warnings: bad.iter().map(|e| format!("skipped: {e}")).collect(),
            notes: None,
        };
        let mut limits = Limits::new();
        for (file, r) in &records {
            limits
                .push(&mut index, r.manifest_row(), || file.display().to_string())
                .map_err(|problem| RunIndexError {
                    path: file.clone(),
                    line: 0,
                    problem,
                })?;
        }
        limits.finish(&mut index);
        Ok(index)
    }

    /// Reads either a `MANIFEST.csv` file or a runs root folder, with the notes of the run
    /// records beside it.
    pub fn load(path: &Path) -> Result<RunIndex, RunIndexError> {
        let (mut reg, root) = if path.is_dir() {
            (RunIndex::load_runs_root(path)?, Some(path))
        } else {
            (RunIndex::load_csv(path)?, path.parent())
        };
        reg.notes = root.and_then(super::RunNotes::scan);
        Ok(reg)
    }
}

/// Where a registry's columns are: the release's 19 first, then, by name, the extra columns
/// faultbench writes ([`MANIFEST_EXTRA_COLUMNS`]); other extra columns are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    width: usize,
    extra: [Option<usize>; MANIFEST_EXTRA_COLUMNS.len()],
}

impl Columns {
    /// The layout of a header, or `None` when it does not start with the release's columns.
    pub fn of(header: &[&str]) -> Option<Columns> {
        let release: Vec<&str> = RELEASE_MANIFEST_HEADER.split(',').collect();
        if header.len() < release.len() || header[..release.len()] != release[..] {
            return None;
        }
        let mut extra = [None; MANIFEST_EXTRA_COLUMNS.len()];
        for (slot, name) in extra.iter_mut().zip(MANIFEST_EXTRA_COLUMNS) {
            *slot = header
                .iter()
                .skip(release.len())
                .position(|c| c.trim() == name)
                .map(|i| i + release.len());
        }
        Some(Columns {
            width: header.len(),
            extra,
        })
    }

    /// `width` columns of which none is one of faultbench's extra columns.
    fn release_only(width: usize) -> Columns {
        Columns {
            width,
            extra: [None; MANIFEST_EXTRA_COLUMNS.len()],
        }
    }
}

/// Parses one data line of a registry with the release's 19 columns, or faultbench's columns
/// ([`MANIFEST_HEADER`](faultbench_core::record::MANIFEST_HEADER)).
pub fn parse_row(line: &str) -> Result<ManifestRow, ManifestRowError> {
    let ours = faultbench_core::record::MANIFEST_HEADER
        .split(',')
        .collect::<Vec<_>>();
    let release = RELEASE_MANIFEST_HEADER.split(',').collect::<Vec<_>>();
    let fields = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.len())
        .unwrap_or(0);
    let header = if fields == ours.len() { ours } else { release };
    // Both built-in headers start with the release's columns (`Columns::of` accepts them).
    let columns = Columns::of(&header).unwrap_or_else(|| Columns::release_only(header.len()));
    row_of(&one_record(line)?, &columns)
}

/// The first CSV record of `line`.
fn one_record(line: &str) -> Result<csv::StringRecord, ManifestRowError> {
    Ok(csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes())
        .records()
        .next()
        .ok_or(ManifestRowError::Empty)??)
}

/// A registry row from its fields laid out as `columns` says; numbers must be finite, counts
/// non-negative integers.
fn row_of(rec: &csv::StringRecord, columns: &Columns) -> Result<ManifestRow, ManifestRowError> {
    if rec.len() != columns.width {
        return Err(ManifestRowError::Width {
            found: rec.len(),
            expected: columns.width,
        });
    }
    let f = |i: usize| rec.get(i).unwrap_or("").to_string();
    let bad_number = |i: usize| {
        move |problem| ManifestRowError::BadNumber {
            field: i + 1,
            column: name(i),
            problem,
        }
    };
    let u = |i: usize| -> Result<u64, ManifestRowError> {
        let s = f(i);
        let s = s.trim();
        if s.is_empty() {
            return Ok(0);
        }
        if let Ok(n) = s.parse::<u64>() {
            return Ok(n);
        }
        // Some writers (pandas) print counts as floats: `12.0`.
        match parse_f64(s) {
            Ok(x) if x >= 0.0 && x.fract() == 0.0 && x <= u64::MAX as f64 => Ok(x as u64),
            Ok(_) | Err(_) => Err(ManifestRowError::NotACount {
                field: i + 1,
                column: name(i),
                value: cut(s),
            }),
        }
    };
    let num = |i: usize| -> Result<f64, ManifestRowError> {
        match parse_opt_f64(&f(i)) {
            Ok(Some(x)) if x < 0.0 => Err(NumberProblem::Negative(x)),
            other => other.map(|x| x.unwrap_or(0.0)),
        }
        .map_err(bad_number(i))
    };
    let score = |i: usize| -> Result<Option<f64>, ManifestRowError> {
        parse_opt_f64(&f(i)).map_err(bad_number(i))
    };
    let opt_u = |i: Option<usize>| -> Result<Option<u64>, ManifestRowError> {
        match i.map(f) {
            Some(s) if !s.trim().is_empty() => u(i.unwrap_or(0)).map(Some),
            _ => Ok(None),
        }
    };
    let opt_num = |i: Option<usize>| -> Result<Option<f64>, ManifestRowError> {
        match i {
            Some(i) if !f(i).trim().is_empty() => num(i).map(Some),
            _ => Ok(None),
        }
    };
    Ok(ManifestRow {
        arm: f(0),
        pass: f(1),
        topology: f(2),
        scenario_id: f(3),
        agent: f(4),
        model: f(5),
        status: f(6),
        submitted: parse_bool(&f(7)).unwrap_or(false),
        is_anomaly: parse_bool(&f(8)),
        outcome_score: score(9)?,
        fix_score: score(10)?,
        reasoning_score: score(11)?,
        tool_calls: u(12)?,
        in_tokens: u(13)?,
        cache_read_tokens: u(14)?,
        cache_write_tokens: u(15)?,
        out_tokens: u(16)?,
        cost_usd: num(17)?,
        wall_seconds: num(18)?,
        judge_in_tokens: opt_u(columns.extra[0])?,
        judge_out_tokens: opt_u(columns.extra[1])?,
        judge_cost_usd: opt_num(columns.extra[2])?,
    })
}

/// The name of a release column; columns after those are found by name ([`Columns`]) and
/// their positions differ between files.
fn name(i: usize) -> &'static str {
    RELEASE_MANIFEST_HEADER
        .split(',')
        .nth(i)
        .unwrap_or("an extra column")
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::record::MANIFEST_HEADER;

    #[test]
    fn our_extra_columns_are_read_by_name_and_others_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("MANIFEST.csv");
        let row =
            "base80,p1,Kath1,kath1-x,sade,m,scored,True,True,1.0,1.0,0.9,10,8,100,5,50,0.1,200.5";
        std::fs::write(
            &p,
            format!("{MANIFEST_HEADER}\n{row},1200,80,0.0005\n{row},,,\n"),
        )
        .unwrap();
        let r = RunIndex::load_csv(&p).unwrap();
        assert_eq!(r.rows[0].judge_in_tokens, Some(1200));
        assert_eq!(r.rows[0].judge_out_tokens, Some(80));
        assert_eq!(r.rows[0].judge_cost_usd, Some(0.0005));
        assert_eq!(r.rows[1].judge_cost_usd, None);
        // A newer column before ours, unknown to this version: skipped, ours found by name.
        std::fs::write(
            &p,
            format!("{RELEASE_MANIFEST_HEADER},lab,judge_cost_usd\n{row},fresh,0.25\n"),
        )
        .unwrap();
        let r = RunIndex::load_csv(&p).unwrap();
        assert_eq!(
            (r.rows[0].judge_cost_usd, r.rows[0].judge_in_tokens),
            (Some(0.25), None)
        );
        // The release's own header still reads, with no judge spend.
        std::fs::write(&p, format!("{RELEASE_MANIFEST_HEADER}\n{row}\n")).unwrap();
        assert_eq!(RunIndex::load_csv(&p).unwrap().rows[0].judge_cost_usd, None);
        assert_eq!(parse_row(row).unwrap().cost_usd, 0.1);
        assert_eq!(
            parse_row(&format!("{row},1,2,0.5")).unwrap().judge_cost_usd,
            Some(0.5)
        );
    }

    #[test]
    fn rows_past_the_cap_are_refused_with_their_line() {
        let good =
            "base80,p1,Kath1,kath1-x,sade,m,scored,True,True,1.0,1.0,0.9,10,8,100,5,50,0.1,200.5";
        let text = format!("{RELEASE_MANIFEST_HEADER}\n{good}\n{good}\n{good}\n");
        let p = Path::new("MANIFEST.csv");
        let e = RunIndex::parse_csv(text.as_bytes(), p, Limits::with_caps(2, 10)).unwrap_err();
        assert!(matches!(e.problem, RunIndexProblem::TooManyRows), "{e}");
        assert_eq!(e.line, 4);
        let ok = RunIndex::parse_csv(text.as_bytes(), p, Limits::with_caps(3, 10)).unwrap();
        assert_eq!(ok.rows.len(), 3);
    }

    #[test]
    fn long_fields_are_cut_apart_and_within_the_cap() {
        let half = "é".repeat(5_000);
        let (a, b) = (format!("{half}a{half}"), format!("{half}b{half}"));
        let (ca, cb) = (bounded_field(&a).unwrap(), bounded_field(&b).unwrap());
        assert_ne!(ca, cb, "values sharing both ends stay apart");
        for c in [&ca, &cb] {
            assert!(
                c.chars().count() <= MAX_FIELD_CHARS,
                "{}",
                c.chars().count()
            );
            assert!(c.contains(&format!("({} bytes, #", a.len())), "{c}");
        }
        assert_eq!(bounded_field(&"x".repeat(MAX_FIELD_CHARS)), None);
        // The end is kept: the category of a scenario id is read from its suffix.
        let id = format!("{}-misdirected", "t".repeat(1_000));
        assert!(bounded_field(&id).unwrap().ends_with("-misdirected"));
    }

    #[test]
    fn torn_last_line_is_skipped_but_a_broken_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("MANIFEST.csv");
        let good =
            "base80,p1,Kath1,kath1-x,sade,m,scored,True,True,1.0,1.0,0.9,10,8,100,5,50,0.1,200.5";
        std::fs::write(
            &p,
            format!("{RELEASE_MANIFEST_HEADER}\n{good}\nbase80,p1,Ka"),
        )
        .unwrap();
        let r = RunIndex::load_csv(&p).unwrap();
        assert_eq!(r.rows.len(), 1);
        assert_eq!(r.rows[0].cache_write_tokens, 5);
        assert_eq!(r.warnings.len(), 1);
        std::fs::write(
            &p,
            format!("{RELEASE_MANIFEST_HEADER}\nbase80,p1\n{good}\n"),
        )
        .unwrap();
        let e = RunIndex::load_csv(&p).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            matches!(
                e.problem,
                RunIndexProblem::Row(ManifestRowError::Width {
                    found: 2,
                    expected: 19
                })
            ),
            "{e}"
        );
    }
}
