// The runtime the SDK's crate compiled goes into the NIF library, the
// server's sources and libei into the server program.
use std::env::var;

fn main() {
    println!(
        "cargo:rustc-link-arg-cdylib={}",
        var("DEP_WELL_BEHAVED_RUNTIME").unwrap()
    );
    println!(
        "cargo:rustc-link-arg-bins={}",
        var("DEP_WELL_BEHAVED_SERVER").unwrap()
    );
    println!(
        "cargo:rustc-link-arg-bins=-L{}",
        var("DEP_WELL_BEHAVED_EI_LIB_DIR").unwrap()
    );
    println!("cargo:rustc-link-arg-bins=-lei");
}
