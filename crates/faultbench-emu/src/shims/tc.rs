//! The `tc` wrapper (netem emulation is being written; everything passes through for now).

use super::realbin;
use std::ffi::OsString;

/// Entry point of the `tc` wrapper.
pub fn main(argv0: &OsString, args: &[OsString]) -> i32 {
    let e = realbin::exec("tc", argv0, args);
    eprintln!("faultbench-netshim: cannot run the real tc: {e}");
    127
}
