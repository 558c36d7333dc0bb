//! Declares the `loom` cfg (set with `RUSTFLAGS="--cfg loom"` to build the
//! locks on the model checker's primitives, see `src/primitives.rs`), so
//! that the compiler knows it and warns about no other.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
    println!("cargo::rerun-if-changed=build.rs");
}
