//! An error and its causes as the one line the CLI prints.
//!
//! Many errors already say their cause in their own message (`cannot
//! create "x": No such file or directory (os error 2)`) and also give it
//! as their source; printing every link of the chain would say it twice.
//! A cause whose text the line already holds is left out. This module
//! does not print or choose exit codes (`main` does).

/// The messages of an error chain (outermost first) joined by `": "`,
/// each cause said once.
pub fn one_line(chain: impl IntoIterator<Item = String>) -> String {
    let mut line = String::new();
    for cause in chain {
        if cause.is_empty() || line.contains(&cause) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&cause);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let os = "No such file or directory (os error 2)".to_string();
        let chain = vec![
            "writing /x/y.parquet".to_string(),
            format!("cannot create a temporary file for \"/x/y.parquet\": {os}"),
            os.clone(),
        ];
        assert_eq!(
            one_line(chain),
            format!(
                "writing /x/y.parquet: cannot create a temporary file for \"/x/y.parquet\": {os}"
            )
        );
    }

    #[test]
    fn distinct_causes_are_all_kept() {
        let chain = ["reading a.csv", "line 3", "bad number"].map(String::from);
        assert_eq!(one_line(chain), "reading a.csv: line 3: bad number");
        assert_eq!(one_line(Vec::<String>::new()), "");
    }
}
