//! English checkers (8x8). Being written.
