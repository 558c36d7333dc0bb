//! How results look: aligned text tables and units ([`mod@format`]), SVG
//! charts ([`chart`]) and heat maps ([`heatmap`]). Nothing here measures
//! or decides.

pub mod chart;
pub mod format;
pub mod heatmap;
