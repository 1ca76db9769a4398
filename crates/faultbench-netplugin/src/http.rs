//! Just enough HTTP/1.1 for Docker's plugin calls: one POST per connection (the answer closes
//! it), a body sized by `Content-Length` or chunked, everything bounded.

use std::io::{BufRead, BufReader, Read, Write};

/// Request line plus headers: Docker's are a few hundred bytes.
const MAX_HEAD_BYTES: usize = 16 << 10;
/// A request body: Docker's largest (CreateNetwork with IPAM data) is a few KiB.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// A request as the driver sees it.
#[derive(Debug)]
pub struct Request {
    /// `POST`, …
    pub method: String,
    /// e.g. `/NetworkDriver.CreateNetwork`.
    pub path: String,
    /// The body, possibly empty.
    pub body: Vec<u8>,
}

fn bad(why: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why.into())
}

fn line<R: BufRead>(r: &mut R, used: &mut usize) -> std::io::Result<String> {
    let mut buf = Vec::new();
    let n = r
        .by_ref()
        .take((MAX_HEAD_BYTES - *used) as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    *used += n;
    if *used > MAX_HEAD_BYTES {
        return Err(bad("request head too large"));
    }
    if n == 0 {
        return Err(bad("connection closed mid-request"));
    }
    let s = String::from_utf8(buf).map_err(|_| bad("request head is not UTF-8"))?;
    Ok(s.trim_end_matches(['\r', '\n']).to_owned())
}

/// Reads one request.
pub fn read_request<S: Read>(stream: S) -> std::io::Result<Request> {
    let mut r = BufReader::new(stream);
    let mut used = 0;
    let first = line(&mut r, &mut used)?;
    let mut parts = first.split(' ');
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(bad("malformed request line"));
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut length: Option<usize> = None;
    let mut chunked = false;
    loop {
        let h = line(&mut r, &mut used)?;
        if h.is_empty() {
            break;
        }
        let Some((k, v)) = h.split_once(':') else {
            return Err(bad("malformed header"));
        };
        let v = v.trim();
        if k.eq_ignore_ascii_case("content-length") {
            let n: usize = v.parse().map_err(|_| bad("bad Content-Length"))?;
            if n > MAX_BODY_BYTES {
                return Err(bad("body too large"));
            }
            length = Some(n);
        } else if k.eq_ignore_ascii_case("transfer-encoding") {
            chunked = v.eq_ignore_ascii_case("chunked");
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let size = line(&mut r, &mut 0)?;
            let size = size.split(';').next().unwrap_or("").trim();
            let n = usize::from_str_radix(size, 16).map_err(|_| bad("bad chunk size"))?;
            if body.len() + n > MAX_BODY_BYTES {
                return Err(bad("body too large"));
            }
            if n == 0 {
                // Trailers end with an empty line.
                while !line(&mut r, &mut 0)?.is_empty() {}
                break;
            }
            let at = body.len();
            body.resize(at + n, 0);
            r.read_exact(&mut body[at..])?;
            line(&mut r, &mut 0)?;
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    }
    Ok(Request { method, path, body })
}

/// Writes a JSON answer and ends the exchange.
pub fn write_response<W: Write>(mut w: W, status: u16, body: &[u8]) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Error" };
    write!(
        w,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/vnd.docker.plugins.v1.2+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    w.write_all(body)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sized_and_a_chunked_body_read_the_same() {
        let a = read_request(&b"POST /X HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"[..]).unwrap();
        assert_eq!((a.method.as_str(), a.path.as_str()), ("POST", "/X"));
        assert_eq!(a.body, b"{}");
        let b = read_request(
            &b"POST /X HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n1\r\n}\r\n0\r\n\r\n"
                [..],
        )
        .unwrap();
        assert_eq!(b.body, b"{}");
    }

    #[test]
    fn oversized_requests_are_refused() {
        let big = format!(
            "POST /X HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY_BYTES + 1
        );
        assert!(read_request(big.as_bytes()).is_err());
        let head = format!(
            "POST /X HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        assert!(read_request(head.as_bytes()).is_err());
        let chunk = format!(
            "POST /X HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
            MAX_BODY_BYTES + 1
        );
        assert!(read_request(chunk.as_bytes()).is_err());
    }
}
