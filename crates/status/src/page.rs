//! The status page: one self-contained HTML document.
//!
//! No external assets (works offline, behind firewalls): inline CSS, a few
//! lines of JS that fetch `status.json` (passing on the page's own query
//! string, so `?token=...` keeps working) every two seconds, and an inline
//! SVG polyline for the pages/s chart. Every number is in an element with a
//! `data-field` attribute naming its JSON path, which is how the browser
//! test matches what is shown against `/status.json`.

/// The page served at `/`.
pub const STATUS_PAGE_HTML: &str = include_str!("page.html");
