//! The one search engine.
