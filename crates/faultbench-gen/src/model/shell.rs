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

/// Most loops a script may unroll, and most commands one unrolled loop may yield (a startup
/// is untrusted: a loop over many words inside loops must not blow up).
const MAX_UNROLLED: usize = 4096;

/// [`commands`] with `for VAR in w1 w2 …; do …; done` loops unrolled when every word of the
/// list is literal (no `$`, no backquote, no parenthesis): each body command once per word,
/// `$VAR` and `${VAR}` replaced. Loops over computed lists (`$(seq 0 3)`) stay as they are:
/// their body commands are read once, with `$VAR` literal (and then ignored by the model).
///
/// Positional parameters built up with `set -- "$@" …` (a common way to collect `vtysh -c`
/// arguments in a loop) are tracked in order, and a `"$@"` word of a later command is
/// replaced by them.
pub fn commands_unrolled(script: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    unroll(&commands(script), &mut out);
    let mut positional: Vec<String> = Vec::new();
    let mut expanded = Vec::with_capacity(out.len());
    for (line, w) in out {
        let words: Vec<String> = w
            .iter()
            .flat_map(|x| {
                if x == "$@" {
                    positional.clone()
                } else {
                    vec![x.clone()]
                }
            })
            .collect();
        if words.first().is_some_and(|x| x == "set") && words.get(1).is_some_and(|x| x == "--") {
            positional = words[2..].to_vec();
            positional.truncate(MAX_UNROLLED);
            continue;
        }
        expanded.push((line, words));
    }
    expanded
}

fn literal(w: &str) -> bool {
    !w.contains(['$', '`', '(', ')'])
}

fn unroll(cmds: &[(usize, Vec<String>)], out: &mut Vec<(usize, Vec<String>)>) {
    let mut k = 0;
    while k < cmds.len() {
        let (line, w) = &cmds[k];
        let header = match w.as_slice() {
            [f, var, kw, words @ ..] if f == "for" && kw == "in" && !words.is_empty() => {
                Some((var.clone(), words.to_vec()))
            }
            _ => None,
        };
        let Some((var, words)) = header else {
            out.push((*line, w.clone()));
            k += 1;
            continue;
        };
        // The body: up to the matching `done` (loops nest).
        let mut depth = 1;
        let mut end = k + 1;
        while end < cmds.len() {
            let first = cmds[end].1.first().map(String::as_str);
            let first = if first == Some("do") {
                cmds[end].1.get(1).map(String::as_str)
            } else {
                first
            };
            match first {
                Some("for" | "while" | "until") => depth += 1,
                Some("done") => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            end += 1;
        }
        let mut body: Vec<(usize, Vec<String>)> = Vec::new();
        for (l, bw) in &cmds[k + 1..end.min(cmds.len())] {
            let bw: Vec<String> = if bw.first().is_some_and(|x| x == "do") {
                bw[1..].to_vec()
            } else {
                bw.clone()
            };
            if !bw.is_empty() {
                body.push((*l, bw));
            }
        }
        if words.iter().all(|w| literal(w)) && words.len() * body.len() <= MAX_UNROLLED {
            let (short, long) = (format!("${var}"), format!("${{{var}}}"));
            for word in &words {
                let subst: Vec<(usize, Vec<String>)> = body
                    .iter()
                    .map(|(l, bw)| {
                        let ws = bw
                            .iter()
                            .map(|x| x.replace(&long, word).replace(&short, word))
                            .collect();
                        (*l, ws)
                    })
                    .collect();
                if out.len() < MAX_UNROLLED * 4 {
                    unroll(&subst, out);
                }
            }
        } else {
            unroll(&body, out);
        }
        k = end + 1;
    }
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
    fn unrolls_literal_for_loops_and_keeps_computed_ones() {
        let script = "for p in eth2 eth3; do\n  ip link set $p master br0\ndone\nfor i in $(seq 0 1); do ip link set eth$i up; done\nfor v in 10 20; do for p in a b; do echo ${p}$v; done; done\n";
        let got: Vec<String> = commands_unrolled(script)
            .into_iter()
            .map(|(_, w)| w.join(" "))
            .collect();
        assert_eq!(
            got,
            [
                "ip link set eth2 master br0",
                "ip link set eth3 master br0",
                "ip link set eth$i up",
                "echo a10",
                "echo b10",
                "echo a20",
                "echo b20",
            ]
        );
        let collected = "set -- -c 'configure terminal'\nfor l in eth0 eth1; do\n  set -- \"$@\" -c \"interface $l\" -c 'ip ospf hello-interval 1'\ndone\nvtysh \"$@\" -c 'router ospf'\n";
        let got: Vec<Vec<String>> = commands_unrolled(collected)
            .into_iter()
            .map(|(_, w)| w)
            .collect();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            got[0].join("|"),
            "vtysh|-c|configure terminal|-c|interface eth0|-c|ip ospf hello-interval 1|-c|interface eth1|-c|ip ospf hello-interval 1|-c|router ospf"
        );
    }

    #[test]
    fn hostile_loops_and_positional_words_stay_bounded() {
        // Three nested loops of 200 words would be 8 million commands.
        let words: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        let list = words.join(" ");
        let script = format!(
            "for a in {list}; do for b in {list}; do for c in {list}; do echo $a$b$c; done; done; done\n"
        );
        let n = commands_unrolled(&script).len();
        assert!(n <= 4 * MAX_UNROLLED + MAX_UNROLLED, "{n} commands");
        // A loop whose list is not literal is read once, not unrolled.
        let n = commands_unrolled("for i in $(seq 1 100000); do echo $i; done\n").len();
        assert_eq!(n, 1);
        // `set --` keeps at most MAX_UNROLLED positional words however often it doubles them.
        let mut doubling = String::from("set -- a\n");
        for _ in 0..20 {
            doubling.push_str("set -- \"$@\" \"$@\"\n");
        }
        doubling.push_str("echo \"$@\"\n");
        let got = commands_unrolled(&doubling);
        assert!(got[0].1.len() <= 2 * MAX_UNROLLED + 1, "{}", got[0].1.len());
    }

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
