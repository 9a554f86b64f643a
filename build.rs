// The migrations are embedded by `sqlx::migrate!`; a new migration file must rebuild the crate.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
