//! Compiles the SDK's C runtime into two static archives in OUT_DIR: the
//! runtime a NIF library links (with the entry shim, c/entry.c), and the
//! server a `schedule: :external` program links instead. A crate of jobs
//! links them through its own build script (the paths reach it as
//! `DEP_WELL_BEHAVED_RUNTIME` and `DEP_WELL_BEHAVED_SERVER`, see the
//! crate's documentation); this crate's tests link the server's erl_nif.
//!
//! The C files come from `WB_SOURCES` and `WB_EXTERNAL_SOURCES` when the
//! Mix compiler sets them, else from the source tree around the crate;
//! the Erlang headers from `ERTS_INCLUDE_DIR` (else `erl` is asked), the ei
//! library from `EI_INCLUDE_DIR` and `EI_LIB_DIR`; the compiler is `CC`
//! (default `cc`) and the archiver `AR` (default `ar`).
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

const RUNTIME_FILES: [&str; 6] = [
    "wb_runtime.c",
    "wb_run.c",
    "wb_cost.c",
    "wb_pool.c",
    "wb_release.c",
    "wb_config.c",
];
const SERVER_FILES: [&str; 5] = [
    "wb_external.c",
    "wb_ext_server.c",
    "wb_ext_jobs.c",
    "wb_ext_nif.c",
    "wb_ext_terms.c",
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let c_src = manifest.join("../../c_src");
    for var in [
        "CC",
        "AR",
        "WB_SOURCES",
        "WB_EXTERNAL_SOURCES",
        "WB_INCLUDE_DIR",
        "ERTS_INCLUDE_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    for var in ["EI_INCLUDE_DIR", "EI_LIB_DIR"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }

    let runtime = sources("WB_SOURCES", &c_src.join("runtime"), &RUNTIME_FILES);
    let server = sources(
        "WB_EXTERNAL_SOURCES",
        &c_src.join("external"),
        &SERVER_FILES,
    );
    let include = env::var("WB_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| c_src.join("include"));
    check_version(&include.join("wb_runtime.h"));
    let erts = env::var("ERTS_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(erl_eval(
                "io:format(\"~s/erts-~s/include\", [code:root_dir(), erlang:system_info(version)])",
            ))
        });
    if !erts.join("erl_nif.h").exists() {
        fail(&format!(
            "erl_nif.h is not in {}: install the Erlang headers (Debian: apt-get install erlang-dev)",
            erts.display()
        ));
    }
    // ei as the Mix compiler passes it, else where erl says
    let ei_dir = || PathBuf::from(erl_eval("io:format(\"~s\", [code:lib_dir(erl_interface)])"));
    let ei_include = env::var("EI_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| ei_dir().join("include"));
    let ei_lib = env::var("EI_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| ei_dir().join("lib"));

    // the headers every file may include
    for dir in [
        include.clone(),
        c_src.join("runtime"),
        c_src.join("external"),
    ] {
        if let Ok(entries) = fs::read_dir(&dir) {
            for e in entries.flatten() {
                println!("cargo:rerun-if-changed={}", e.path().display());
            }
        }
    }
    let entry = manifest.join("c/entry.c");
    println!("cargo:rerun-if-changed={}", entry.display());

    let common: Vec<String> = vec![
        "-std=c11".into(),
        "-O2".into(),
        "-fPIC".into(),
        "-fvisibility=hidden".into(),
        "-pthread".into(),
        "-Wall".into(),
        // no -Werror: a user's newer compiler may warn where ours does not
        // (the library's own build holds these files to -Werror)
        "-Wextra".into(),
        format!("-I{}", erts.display()),
        format!("-I{}", include.display()),
    ];
    let mut server_flags = common.clone();
    server_flags.push("-DWB_EXTERNAL_SERVER".into());
    server_flags.push(format!("-I{}", ei_include.display()));

    let mut runtime_files = runtime;
    runtime_files.push(entry);
    let rt_dir = out.join("runtime");
    let srv_dir = out.join("server");
    let mut server = server;
    server.push(runtime_files.last().unwrap().clone());
    fs::create_dir_all(&rt_dir).unwrap();
    fs::create_dir_all(&srv_dir).unwrap();
    let mut tasks: Vec<(PathBuf, PathBuf, &[String])> = Vec::new();
    for (i, f) in runtime_files.iter().enumerate() {
        tasks.push((f.clone(), object(&rt_dir, i, f), &common));
    }
    for (i, f) in server.iter().enumerate() {
        tasks.push((f.clone(), object(&srv_dir, i, f), &server_flags));
    }
    compile_all(&tasks);
    let objects = |from: usize, count: usize| -> Vec<PathBuf> {
        tasks[from..from + count]
            .iter()
            .map(|t| t.1.clone())
            .collect()
    };
    let rt_lib = archive(
        &out.join("libwb_runtime.a"),
        &objects(0, runtime_files.len()),
    );
    let srv_lib = archive(
        &out.join("libwb_server.a"),
        &objects(runtime_files.len(), server.len()),
    );

    // for a crate of jobs (DEP_WELL_BEHAVED_*)
    println!("cargo:runtime={}", rt_lib.display());
    println!("cargo:server={}", srv_lib.display());
    println!("cargo:ei_lib_dir={}", ei_lib.display());
    // this crate's own tests: the server's erl_nif, over its own terms
    println!("cargo:rustc-link-arg={}", srv_lib.display());
    println!("cargo:rustc-link-arg=-L{}", ei_lib.display());
    println!("cargo:rustc-link-arg=-lei");
    println!("cargo:rustc-link-arg=-lpthread");
}

fn sources(var: &str, dir: &Path, files: &[&str]) -> Vec<PathBuf> {
    match env::var(var) {
        Ok(list) if !list.trim().is_empty() => list
            .split_whitespace()
            .map(PathBuf::from)
            .collect::<Vec<_>>(),
        _ => files.iter().map(|f| dir.join(f)).collect(),
    }
    .into_iter()
    .inspect(|p| println!("cargo:rerun-if-changed={}", p.display()))
    .collect()
}

/// Runs the compiler on every task, as many at once as cargo allows.
fn compile_all(tasks: &[(PathBuf, PathBuf, &[String])]) {
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let at_once: usize = env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2)
        .max(1);
    let mut failed = false;
    for batch in tasks.chunks(at_once) {
        let children: Vec<(&PathBuf, Child)> = batch
            .iter()
            .map(|(file, obj, flags)| {
                let child = Command::new(&cc)
                    .args(flags.iter())
                    .arg("-c")
                    .arg(file)
                    .arg("-o")
                    .arg(obj)
                    .spawn()
                    .unwrap_or_else(|e| {
                        fail(&format!(
                            "the C compiler {} did not run ({}): install gcc (Debian: apt-get install gcc)",
                            cc, e
                        ))
                    });
                (file, child)
            })
            .collect();
        for (file, mut child) in children {
            if !child.wait().map(|s| s.success()).unwrap_or(false) {
                eprintln!("compiling {} failed", file.display());
                failed = true;
            }
        }
    }
    if failed {
        fail("the C runtime did not compile (the compiler's messages are above)");
    }
}

/// The object of the `index`th file: numbered, so that two files of one
/// name in different folders do not meet.
fn object(dir: &Path, index: usize, file: &Path) -> PathBuf {
    dir.join(format!(
        "{}_{}.o",
        index,
        file.file_stem().unwrap().to_string_lossy()
    ))
}

fn archive(lib: &Path, objects: &[PathBuf]) -> PathBuf {
    let _ = fs::remove_file(lib);
    let ar = env::var("AR").unwrap_or_else(|_| "ar".into());
    let status = Command::new(&ar).arg("crs").arg(lib).args(objects).status();
    if !status.map(|s| s.success()).unwrap_or(false) {
        fail(&format!(
            "{} could not make {}: install binutils (Debian: apt-get install binutils)",
            ar,
            lib.display()
        ));
    }
    lib.to_path_buf()
}

fn erl_eval(expr: &str) -> String {
    let out = Command::new("erl")
        .args(["-noshell", "-eval", &format!("{}, halt().", expr)])
        .output()
        .unwrap_or_else(|e| fail(&format!("erl did not run ({}): install Erlang/OTP", e)));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The header's version must be this crate's: one SDK, one version.
fn check_version(header: &Path) {
    let text = fs::read_to_string(header)
        .unwrap_or_else(|e| fail(&format!("{} is unreadable: {}", header.display(), e)));
    let want = format!(
        "#define WB_SDK_VERSION_STRING \"{}\"",
        env::var("CARGO_PKG_VERSION").unwrap()
    );
    if !text.lines().any(|l| l.trim() == want) {
        fail(&format!(
            "{} is not version {} of the SDK: this crate and the C runtime must come from the same release",
            header.display(),
            env::var("CARGO_PKG_VERSION").unwrap()
        ));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("error: {}", message);
    std::process::exit(1)
}
