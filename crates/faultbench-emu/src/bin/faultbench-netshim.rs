//! `faultbench-netshim`: the multi-call binary behind the `ip`, `tc` and `bridge` wrappers that
//! faultbench installs into lab devices on kernels lacking VLAN, dummy, bonding or netem
//! support, and the daemon (`portd`) behind each emulated link. See `faultbench_emu::shims`.

fn main() {
    let code = faultbench_emu::shims::multicall_main(std::env::args_os().collect());
    std::process::exit(code);
}
