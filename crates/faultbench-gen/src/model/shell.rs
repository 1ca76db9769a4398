//! Just enough shell to read a startup script: lines joined at trailing backslashes, split
//! into simple commands at unquoted `;`, `&&`, `||` and `|`, and into words with single
//! quotes, double quotes and backslashes as a POSIX shell reads them. Expansions are not
//! performed: a word holding `$` is kept literally, and the model only uses words that parse as
//! addresses, numbers or names.

/// The simple commands of a script, each as its words, with the 1-based line it starts on.
pub fn commands(script: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut joined = String::new();
    let mut start = 0;
    for (i, raw) in script.lines().enumerate() {
        if joined.is_empty() {
            start = i + 1;
        }
        if let Some(stripped) = raw.strip_suffix('\\') {
            joined.push_str(stripped);
            joined.push(' ');
            continue;
        }
        joined.push_str(raw);
        for cmd in split_line(&joined) {
            if !cmd.is_empty() {
                out.push((start, cmd));
            }
        }
        joined.clear();
    }
    if !joined.is_empty() {
        for cmd in split_line(&joined) {
            if !cmd.is_empty() {
                out.push((start, cmd));
            }
        }
    }
    out
}

fn split_line(line: &str) -> Vec<Vec<String>> {
    let mut cmds = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, cmds: &mut Vec<Vec<String>>| {
        if *in_word {
            if let Some(c) = cmds.last_mut() {
                c.push(std::mem::take(word));
            }
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '#' if !in_word => break,
            ' ' | '\t' => end_word(&mut word, &mut in_word, &mut cmds),
            ';' | '|' | '&' => {
                end_word(&mut word, &mut in_word, &mut cmds);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                cmds.push(Vec::new());
            }
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                if !matches!(n, '"' | '\\' | '$' | '`') {
                                    word.push('\\');
                                }
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut cmds);
    cmds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_commands_quotes_and_continuations() {
        let s = "ip addr add 10.0.0.1/24 dev eth0 # comment\n\
                 vtysh -c \"configure terminal\" -c 'router rip' \\\n  -c \"network 10.0.0.0/8\"\n\
                 a; b && c || d | e\n";
        let c = commands(s);
        assert_eq!(
            c[0].1,
            vec!["ip", "addr", "add", "10.0.0.1/24", "dev", "eth0"]
        );
        assert_eq!(c[1].0, 2);
        assert_eq!(
            c[1].1,
            vec![
                "vtysh",
                "-c",
                "configure terminal",
                "-c",
                "router rip",
                "-c",
                "network 10.0.0.0/8"
            ]
        );
        let rest: Vec<_> = c[2..].iter().map(|(_, w)| w.join(" ")).collect();
        assert_eq!(rest, vec!["a", "b", "c", "d", "e"]);
    }
}
