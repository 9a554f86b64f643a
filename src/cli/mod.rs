//! Parts of the `kibitz` command line too large for `main.rs`.

pub mod annotate;
mod http_client;
