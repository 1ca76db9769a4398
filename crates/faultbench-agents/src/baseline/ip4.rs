//! IPv4 prefixes, just enough for the baseline's address arithmetic (no crate needed).

use std::fmt;
use std::net::Ipv4Addr;

/// An address with a prefix length: `10.0.1.2/24` (an interface) or `10.0.1.0/24` (a route).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Net {
    /// The address as written (host bits kept).
    pub addr: Ipv4Addr,
    /// Prefix length, 0–32.
    pub len: u8,
}

impl Net {
    /// Parses `a.b.c.d/len` or a bare address (`/32`).
    pub fn parse(text: &str) -> Option<Net> {
        let text = text.trim();
        let (a, l) = match text.split_once('/') {
            Some((a, l)) => (a, l.parse::<u8>().ok()?),
            None => (text, 32),
        };
        (l <= 32).then_some(())?;
        Some(Net {
            addr: a.parse().ok()?,
            len: l,
        })
    }

    fn mask(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.len))
        }
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> Net {
        Net {
            addr: Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            len: self.len,
        }
    }

    /// Whether `ip` lies inside this prefix.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }

    /// Whether `other` lies entirely inside this prefix.
    pub fn covers(&self, other: &Net) -> bool {
        self.len <= other.len && self.contains(other.addr)
    }

    /// The netmask in dotted form (`255.255.255.0`).
    pub fn netmask(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.mask())
    }
}

impl fmt::Display for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let n = Net::parse("10.0.1.7/24").unwrap();
        assert_eq!(n.network().to_string(), "10.0.1.0/24");
        assert!(n.contains("10.0.1.200".parse().unwrap()));
        assert!(!n.contains("10.0.2.1".parse().unwrap()));
        assert!(Net::parse("10.0.0.0/8").unwrap().covers(&n));
        assert!(!n.covers(&Net::parse("10.0.0.0/8").unwrap()));
        assert_eq!(Net::parse("1.2.3.4").unwrap().len, 32);
        assert_eq!(
            Net::parse("0.0.0.0/0").unwrap().netmask().to_string(),
            "0.0.0.0"
        );
        assert!(
            Net::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        assert_eq!(n.netmask().to_string(), "255.255.255.0");
        assert!(Net::parse("10.0.0.1/33").is_none() && Net::parse("x/24").is_none());
    }
}
