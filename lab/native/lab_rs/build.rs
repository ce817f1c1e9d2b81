// The runtime the SDK's crate compiled goes into the NIF library.
fn main() {
    println!(
        "cargo:rustc-link-arg-cdylib={}",
        std::env::var("DEP_WELL_BEHAVED_RUNTIME").unwrap()
    );
}
