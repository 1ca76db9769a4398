//! An in-process time-series store with Influx's vocabulary: buckets hold measurements, a
//! measurement holds points (time, tags, fields).
//!
//! The store can also append every point to a JSONL file ([`TelemetryStore::write_jsonl`])
//! and another process can serve that file ([`TelemetryStore::follow_jsonl`]): a run's collector
//! writes from deploy on, and an MCP server started later for an external agent still sees
//! everything since deploy.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

/// A field value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// true / false.
    Bool(bool),
    /// An integer (counters, counts).
    Int(i64),
    /// A float.
    Float(f64),
    /// Text (states such as `UP`).
    Text(String),
}

impl From<bool> for FieldValue {
    fn from(v: bool) -> Self {
        FieldValue::Bool(v)
    }
}
impl From<i64> for FieldValue {
    fn from(v: i64) -> Self {
        FieldValue::Int(v)
    }
}
impl From<f64> for FieldValue {
    fn from(v: f64) -> Self {
        FieldValue::Float(v)
    }
}
impl From<&str> for FieldValue {
    fn from(v: &str) -> Self {
        FieldValue::Text(v.to_string())
    }
}
impl From<String> for FieldValue {
    fn from(v: String) -> Self {
        FieldValue::Text(v)
    }
}

/// One sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Unix time in milliseconds.
    pub time_ms: u64,
    /// Measurement name, e.g. `interface`.
    pub measurement: String,
    /// Tags (what the point is about: device, interface…).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Fields (the values).
    #[serde(default)]
    pub fields: BTreeMap<String, FieldValue>,
}

impl Point {
    /// A point at `time_ms` with no tags or fields yet.
    pub fn new(measurement: impl Into<String>, time_ms: u64) -> Self {
        Point {
            time_ms,
            measurement: measurement.into(),
            tags: BTreeMap::new(),
            fields: BTreeMap::new(),
        }
    }

    /// Adds a tag.
    pub fn tag(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.tags.insert(k.into(), v.into());
        self
    }

    /// Adds a field.
    pub fn field(mut self, k: impl Into<String>, v: impl Into<FieldValue>) -> Self {
        self.fields.insert(k.into(), v.into());
        self
    }
}

/// What `influx_list_buckets` shows about a bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BucketInfo {
    /// Bucket name.
    pub name: String,
    /// Number of measurements.
    pub measurements: usize,
    /// Points kept.
    pub points: usize,
    /// Oldest point (RFC 3339), if any.
    pub first: Option<String>,
    /// Newest point (RFC 3339), if any.
    pub last: Option<String>,
    /// Points dropped because a measurement reached the store's limit.
    pub dropped: u64,
}

#[derive(Debug, Default)]
struct Bucket {
    measurements: BTreeMap<String, VecDeque<Point>>,
    dropped: u64,
}

#[derive(Serialize, Deserialize)]
struct Line {
    bucket: String,
    #[serde(flatten)]
    point: Point,
}

#[derive(Debug)]
struct Follow {
    path: PathBuf,
    offset: u64,
    partial: String,
}

/// The store. Thread-safe; share it with `Arc`.
#[derive(Debug)]
pub struct TelemetryStore {
    default_bucket: String,
    max_points: usize,
    buckets: RwLock<BTreeMap<String, Bucket>>,
    sink: Option<Mutex<std::fs::File>>,
    follow: Option<Mutex<Follow>>,
}

impl Default for TelemetryStore {
    fn default() -> Self {
        Self::new()
    }
}

/// The bucket the collector writes to and the `influx_*` tools read.
pub const DEFAULT_BUCKET: &str = "lab_telemetry";

impl TelemetryStore {
    /// An empty store whose default bucket is [`DEFAULT_BUCKET`], keeping at most 100 000
    /// points per measurement (oldest dropped first).
    pub fn new() -> Self {
        TelemetryStore {
            default_bucket: DEFAULT_BUCKET.into(),
            max_points: 100_000,
            buckets: RwLock::new(BTreeMap::new()),
            sink: None,
            follow: None,
        }
    }

    /// Changes the per-measurement limit.
    pub fn with_max_points(mut self, n: usize) -> Self {
        self.max_points = n.max(1);
        self
    }

    /// Also appends every inserted point to a JSONL file (created if missing).
    pub fn write_jsonl(mut self, path: impl AsRef<Path>) -> std::io::Result<Self> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        self.sink = Some(Mutex::new(f));
        Ok(self)
    }

    /// A store that serves a JSONL file written by another process's store, reading new lines
    /// on every [`TelemetryStore::refresh`] (the `influx_*` tools refresh before each query).
    pub fn follow_jsonl(path: impl Into<PathBuf>) -> Self {
        let mut s = Self::new();
        s.follow = Some(Mutex::new(Follow {
            path: path.into(),
            offset: 0,
            partial: String::new(),
        }));
        s
    }

    /// The default bucket's name.
    pub fn default_bucket(&self) -> &str {
        &self.default_bucket
    }

    /// Adds a point to the default bucket.
    pub fn insert(&self, point: Point) {
        let b = self.default_bucket.clone();
        self.insert_into(&b, point);
    }

    /// Adds a point to a bucket (created on first use).
    pub fn insert_into(&self, bucket: &str, point: Point) {
        if let Some(sink) = &self.sink {
            let line = Line {
                bucket: bucket.to_string(),
                point: point.clone(),
            };
            if let (Ok(mut f), Ok(text)) = (sink.lock(), serde_json::to_string(&line)) {
                // A full disk must not stop sampling; the in-memory copy still has the point.
                let _ = writeln!(f, "{text}");
            }
        }
        self.put(bucket, point);
    }

    fn put(&self, bucket: &str, point: Point) {
        let mut g = self.buckets.write().unwrap_or_else(|p| p.into_inner());
        let b = g.entry(bucket.to_string()).or_default();
        let q = b.measurements.entry(point.measurement.clone()).or_default();
        q.push_back(point);
        if q.len() > self.max_points {
            q.pop_front();
            b.dropped += 1;
        }
    }

    /// Reads lines appended to the followed file since the last refresh (no-op otherwise).
    /// Unreadable lines are skipped.
    pub fn refresh(&self) {
        let Some(follow) = &self.follow else { return };
        let mut f = follow.lock().unwrap_or_else(|p| p.into_inner());
        let Ok(mut file) = std::fs::File::open(&f.path) else {
            return;
        };
        if file.seek(SeekFrom::Start(f.offset)).is_err() {
            return;
        }
        let mut chunk = String::new();
        let Ok(n) = std::io::BufReader::new(&mut file).read_to_string(&mut chunk) else {
            return;
        };
        f.offset += n as u64;
        let text = std::mem::take(&mut f.partial) + &chunk;
        let mut lines = text.split_inclusive('\n').peekable();
        while let Some(line) = lines.next() {
            if !line.ends_with('\n') && lines.peek().is_none() {
                // A line still being written: keep it for the next refresh.
                f.partial = line.to_string();
                break;
            }
            if let Ok(l) = serde_json::from_str::<Line>(line.trim_end()) {
                self.put(&l.bucket, l.point);
            }
        }
    }

    /// Loads a whole JSONL file into a new store.
    pub fn load_jsonl(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let s = Self::new();
        let f = std::fs::File::open(path)?;
        for line in std::io::BufReader::new(f).lines() {
            if let Ok(l) = serde_json::from_str::<Line>(&line?) {
                s.put(&l.bucket, l.point);
            }
        }
        Ok(s)
    }

    /// Every bucket with its sizes and time span.
    pub fn buckets(&self) -> Vec<BucketInfo> {
        let g = self.buckets.read().unwrap_or_else(|p| p.into_inner());
        g.iter()
            .map(|(name, b)| {
                let times = b
                    .measurements
                    .values()
                    .flat_map(|q| q.front().into_iter().chain(q.back()))
                    .map(|p| p.time_ms);
                let (first, last) =
                    times.fold((None, None), |(lo, hi): (Option<u64>, Option<u64>), t| {
                        (
                            Some(lo.map_or(t, |l| l.min(t))),
                            Some(hi.map_or(t, |h| h.max(t))),
                        )
                    });
                BucketInfo {
                    name: name.clone(),
                    measurements: b.measurements.len(),
                    points: b.measurements.values().map(VecDeque::len).sum(),
                    first: first.map(rfc3339),
                    last: last.map(rfc3339),
                    dropped: b.dropped,
                }
            })
            .collect()
    }

    /// Measurement names of a bucket, sorted (empty when the bucket does not exist).
    pub fn measurements(&self, bucket: &str) -> Vec<String> {
        let g = self.buckets.read().unwrap_or_else(|p| p.into_inner());
        g.get(bucket)
            .map(|b| b.measurements.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Points of a measurement (`None` when it does not exist).
    pub fn count(&self, bucket: &str, measurement: &str) -> Option<usize> {
        let g = self.buckets.read().unwrap_or_else(|p| p.into_inner());
        g.get(bucket)?
            .measurements
            .get(measurement)
            .map(VecDeque::len)
    }

    /// `limit` points of a measurement after skipping `offset`, oldest first, with the total.
    pub fn query(
        &self,
        bucket: &str,
        measurement: &str,
        limit: usize,
        offset: usize,
    ) -> Option<(usize, Vec<Point>)> {
        let g = self.buckets.read().unwrap_or_else(|p| p.into_inner());
        let q = g.get(bucket)?.measurements.get(measurement)?;
        Some((
            q.len(),
            q.iter().skip(offset).take(limit).cloned().collect(),
        ))
    }
}

/// Unix milliseconds as an RFC 3339 UTC timestamp, e.g. `2026-03-01T12:00:05.250Z` (the
/// formatter of run records, with milliseconds).
///
/// ```
/// use faultbench_emu::tools::telemetry::rfc3339;
/// assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(rfc3339(951_827_696_789), "2000-02-29T12:34:56.789Z");
/// ```
pub use faultbench_core::datetime::rfc3339_millis as rfc3339;
