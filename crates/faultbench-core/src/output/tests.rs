use super::*;
use std::os::unix::fs::symlink;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn creates_the_derived_folders_and_writes_atomically() {
    let base = tempfile::tempdir().unwrap();
    let dir = OutputDir::open(base.path(), "a/b/./c").unwrap();
    assert_eq!(dir.path(), base.path().join("a/b/c"));
    let p = dir.write("f.txt", b"one").unwrap();
    assert_eq!(p, base.path().join("a/b/c/f.txt"));
    dir.write("f.txt", b"two").unwrap();
    dir.write_unsynced("g.txt", b"three").unwrap();
    dir.write_with("h.txt", |f| f.write_all(b"four")).unwrap();
    assert_eq!(read(&p), "two");
    assert_eq!(read(&dir.file_path("g.txt")), "three");
    assert_eq!(read(&dir.file_path("h.txt")), "four");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 3, "no temporary file left behind");
    // Opening again finds the same folder.
    let again = OutputDir::open(base.path(), "a/b/c").unwrap();
    assert_eq!(read(&again.file_path("f.txt")), "two");
}

#[test]
fn the_trusted_base_may_be_a_link() {
    let real = tempfile::tempdir().unwrap();
    let holder = tempfile::tempdir().unwrap();
    let base = holder.path().join("base");
    symlink(real.path(), &base).unwrap();
    OutputDir::open(&base, "x")
        .unwrap()
        .write("f", b"1")
        .unwrap();
    assert_eq!(read(&real.path().join("x/f")), "1");
}

#[test]
fn a_link_among_the_derived_folders_is_refused_and_nothing_is_written() {
    let base = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(base.path().join("a")).unwrap();
    symlink(outside.path(), base.path().join("a/b")).unwrap();
    let e = OutputDir::open(base.path(), "a/b/c").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::Link), "{e}");
    assert_eq!(e.path, base.path().join("a/b"));
    let text = e.to_string();
    assert!(text.contains("a/b: is a symbolic link"), "{text}");
    assert!(text.contains("wrote nothing there"), "{text}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // The same from an open folder, and for a link to a file.
    let a = OutputDir::open(base.path(), "a").unwrap();
    assert!(matches!(
        a.subdir("b").unwrap_err().kind,
        OutputErrorKind::Link
    ));
    symlink("/etc/hostname", base.path().join("a/f")).unwrap();
    assert!(matches!(
        a.subdir("f").unwrap_err().kind,
        OutputErrorKind::Link
    ));
}

#[test]
fn a_file_where_a_folder_belongs_is_not_a_folder() {
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("a"), "x").unwrap();
    let e = OutputDir::open(base.path(), "a/b").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::NotDir), "{e}");
}

#[test]
fn derived_paths_and_names_never_leave_their_folder() {
    let base = tempfile::tempdir().unwrap();
    for bad in ["../x", "a/../../x", "/abs"] {
        let e = OutputDir::open(base.path(), bad).unwrap_err();
        assert!(matches!(e.kind, OutputErrorKind::BadName(_)), "{bad}: {e}");
    }
    let dir = OutputDir::open(base.path(), "").unwrap();
    for bad in ["", ".", "..", "a/b", "../x", "/x", "a/"] {
        let e = dir.write(bad, b"x").unwrap_err();
        assert!(
            matches!(e.kind, OutputErrorKind::BadName(_)),
            "{bad:?}: {e}"
        );
    }
    assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
}

/// The finding: a link planted at the output's own name sent the write to its target.
#[test]
fn a_link_at_the_file_name_is_refused_and_its_target_untouched() {
    let base = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let dangling = outside.path().join("not-yet");
    symlink(&victim, base.path().join("index.html")).unwrap();
    symlink(&dangling, base.path().join("new.html")).unwrap();
    let dir = OutputDir::open(base.path(), "").unwrap();
    for name in ["index.html", "new.html"] {
        let e = dir.write(name, b"owned").unwrap_err();
        assert!(matches!(e.kind, OutputErrorKind::Link), "{e}");
        assert_eq!(e.path, base.path().join(name));
        let e = dir.append_line(name, "owned").unwrap_err();
        assert!(matches!(e.kind, OutputErrorKind::Link), "{e}");
        let e = dir.create_file(name).unwrap_err();
        assert!(matches!(e.kind, OutputErrorKind::Link), "{e}");
    }
    assert_eq!(read(&victim), "precious");
    assert!(
        !dangling.exists(),
        "a dangling link's target is never created"
    );
    assert!(
        std::fs::symlink_metadata(base.path().join("index.html"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is left for the user to see"
    );
}

#[test]
fn a_hard_linked_file_is_replaced_never_written_in_place() {
    let base = tempfile::tempdir().unwrap();
    let other = base.path().join("other");
    std::fs::write(&other, "keep").unwrap();
    std::fs::hard_link(&other, base.path().join("m.csv")).unwrap();
    let dir = OutputDir::open(base.path(), "").unwrap();
    let e = dir.append_line("m.csv", "row").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::HardLinked), "{e}");
    let e = dir.create_file("m.csv").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::HardLinked), "{e}");
    assert_eq!(read(&other), "keep");
    // An atomic write replaces the name: the other name keeps its content.
    dir.write("m.csv", b"new").unwrap();
    assert_eq!(read(&other), "keep");
    assert_eq!(read(&base.path().join("m.csv")), "new");
}

#[test]
fn a_fifo_or_folder_at_the_name_is_refused_without_blocking() {
    let base = tempfile::tempdir().unwrap();
    rustix::fs::mkfifoat(CWD, base.path().join("fifo"), Mode::from_raw_mode(0o600)).unwrap();
    std::fs::create_dir(base.path().join("sub")).unwrap();
    let dir = OutputDir::open(base.path(), "").unwrap();
    // Without O_NONBLOCK this open would wait for a reader forever.
    let e = dir.append_line("fifo", "x").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::NotFile), "{e}");
    let e = dir.create_file("fifo").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::NotFile), "{e}");
    let e = dir.write("sub", b"x").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::NotFile), "{e}");
    let e = dir.append_line("sub", "x").unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::NotFile), "{e}");
}

#[test]
fn append_and_create_work_on_plain_files() {
    let base = tempfile::tempdir().unwrap();
    let dir = OutputDir::open(base.path(), "r").unwrap();
    dir.append_line("m.csv", "a\n").unwrap();
    dir.append_line("m.csv", "b").unwrap();
    assert_eq!(read(&dir.file_path("m.csv")), "a\nb\n");
    let mut f = dir.create_file("m.csv").unwrap();
    f.write_all(b"fresh").unwrap();
    drop(f);
    assert_eq!(read(&dir.file_path("m.csv")), "fresh");
}

#[test]
fn check_no_link_reads_only_and_finds_links_in_existing_parts() {
    let base = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    check_no_link(base.path(), Path::new("T/s/a/p1")).unwrap();
    assert_eq!(
        std::fs::read_dir(base.path()).unwrap().count(),
        0,
        "nothing created"
    );
    std::fs::create_dir_all(base.path().join("T/s")).unwrap();
    symlink(outside.path(), base.path().join("T/s/a")).unwrap();
    let e = check_no_link(base.path(), Path::new("T/s/a/p1")).unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::Link), "{e}");
    assert_eq!(e.path, base.path().join("T/s/a"));
    check_no_link(base.path(), Path::new("T/other/a/p1")).unwrap();
    check_no_link(&base.path().join("missing"), Path::new("x")).unwrap();
    // The last part may be a file; a file before it is not a folder.
    std::fs::write(base.path().join("identity.json"), "{}").unwrap();
    check_no_link(base.path(), Path::new("identity.json")).unwrap();
    let e = check_no_link(base.path(), Path::new("identity.json/x")).unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::NotDir), "{e}");
    symlink("/etc/hostname", base.path().join("MANIFEST.csv")).unwrap();
    let e = check_no_link(base.path(), Path::new("MANIFEST.csv")).unwrap_err();
    assert!(matches!(e.kind, OutputErrorKind::Link), "{e}");
}

#[test]
fn an_empty_base_is_the_current_folder() {
    let dir = OutputDir::existing("").unwrap();
    assert_eq!(dir.file_path("x"), Path::new("x"));
    let cwd = std::fs::metadata(".").unwrap();
    let opened = File::from(dir.fd.try_clone().unwrap()).metadata().unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((opened.dev(), opened.ino()), (cwd.dev(), cwd.ino()));
}

#[test]
fn concurrent_writers_of_one_file_never_collide() {
    let base = tempfile::tempdir().unwrap();
    let dir = std::sync::Arc::new(OutputDir::open(base.path(), "").unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let body = format!("{t}-{i}-").repeat(200);
                    dir.write("r.json", body.as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = read(&base.path().join("r.json"));
    let unit = text.split_inclusive('-').take(2).collect::<String>();
    assert_eq!(text, unit.repeat(200), "one whole write, never a mix");
    assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 1);
}

#[test]
fn errors_convert_to_io_errors_with_the_message() {
    let base = tempfile::tempdir().unwrap();
    symlink("/tmp", base.path().join("l")).unwrap();
    let e: std::io::Error = OutputDir::open(base.path(), "l").unwrap_err().into();
    assert!(e.to_string().contains("is a symbolic link"), "{e}");
}
