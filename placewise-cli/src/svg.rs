//! A horizontal bar chart as SVG, for `capacity --svg`.

use std::fmt::Write;

/// One bar: a label, a value, and a note printed after the bar (what ran out, say).
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) value: f64,
    pub(crate) note: String,
}

/// Draws `bars` under `title`, longest bar full width.
pub(crate) fn bars(title: &str, bars: &[Bar]) -> String {
    const ROW: usize = 22;
    const LEFT: usize = 180;
    const WIDTH: usize = 420;
    let height = 40 + ROW * bars.len().max(1);
    let max = bars.iter().map(|b| b.value).fold(0.0_f64, f64::max);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="12">"#,
        LEFT + WIDTH + 200
    );
    let _ = writeln!(s, r#"<text x="8" y="20" font-weight="bold">{}</text>"#, escape(title));
    for (i, b) in bars.iter().enumerate() {
        let y = 32 + i * ROW;
        let w = if max > 0.0 { (b.value / max * WIDTH as f64).round() as usize } else { 0 };
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end">{}</text><rect x="{LEFT}" y="{y}" width="{w}" height="{}" fill="#4a7ab8"/><text x="{}" y="{}">{} {}</text>"##,
            LEFT - 6,
            y + 14,
            escape(&b.label),
            ROW - 6,
            LEFT + w + 6,
            y + 14,
            crate::own::number(b.value),
            escape(&b.note)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_bar_is_full_width_and_text_is_escaped() {
        let svg = bars(
            "fits <more>",
            &[
                Bar { label: "az1".into(), value: 10.0, note: "memory".into() },
                Bar { label: "az2".into(), value: 5.0, note: String::new() },
            ],
        );
        assert!(svg.contains(r#"width="420""#) && svg.contains(r#"width="210""#), "{svg}");
        assert!(svg.contains("fits &lt;more&gt;"));
    }
}
