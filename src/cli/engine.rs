//! `kibitz engine <protocol>`: one of the stdio engines of [`kibitz::protocols::engine`], the same entry
//! points as the protocol executables in `src/bin/`.

use anyhow::{Result, bail};

use kibitz::protocols::engine::{self, STDIO};

pub fn run(protocol: &str) -> Result<()> {
    if let Some(engine) = engine::find(protocol) {
        (engine.run)()?;
        return Ok(());
    }
    if protocol == "ceboard" {
        bail!("CEBoard is a shared library (libkibitz.so, exporting LoadEngine), not a stdio protocol");
    }
    let known: Vec<&str> = STDIO.iter().map(|e| e.name).collect();
    bail!("unknown protocol `{protocol}` (known: {})", known.join(", "))
}
