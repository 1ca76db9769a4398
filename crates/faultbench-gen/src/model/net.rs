//! IPv4 addresses with a prefix length, as lab files write them (`10.0.0.1/24`).

use serde::Serialize;
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// An interface address or a prefix: an IPv4 address and a prefix length (0–32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4Net {
    /// The address as written (host bits kept for an interface address).
    pub addr: Ipv4Addr,
    /// Prefix length.
    pub len: u8,
}

impl Ipv4Net {
    /// A net; `None` when `len > 32`.
    pub fn new(addr: Ipv4Addr, len: u8) -> Option<Ipv4Net> {
        (len <= 32).then_some(Ipv4Net { addr, len })
    }

    fn mask(self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.len))
        }
    }

    /// The network (host bits cleared).
    pub fn network(self) -> Ipv4Net {
        Ipv4Net {
            addr: Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            len: self.len,
        }
    }

    /// Whether `ip` is inside this prefix.
    pub fn contains(self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }

    /// The dotted netmask (`255.255.255.0`).
    pub fn netmask(self) -> Ipv4Addr {
        Ipv4Addr::from(self.mask())
    }

    /// The usable host addresses of the prefix, in order (none for /31 and /32 beyond the two
    /// or one addresses they hold).
    pub fn hosts(self) -> impl Iterator<Item = Ipv4Addr> {
        let net = u32::from(self.network().addr);
        let size: u64 = 1u64 << (32 - u32::from(self.len));
        let (first, last) = if self.len >= 31 {
            (0, size)
        } else {
            (1, size - 1)
        };
        (first..last).filter_map(move |i| u32::try_from(i).ok().map(|i| Ipv4Addr::from(net + i)))
    }
}

impl Serialize for Ipv4Net {
    /// As written in lab files: `10.0.0.1/24`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Ipv4Net {
    type Err = String;
    /// `a.b.c.d/len`; a bare address is a /32.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, l) = s.split_once('/').unwrap_or((s, "32"));
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("`{s}` is not an IPv4 address"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|l| *l <= 32)
            .ok_or_else(|| format!("`{s}` has no prefix length between 0 and 32"))?;
        Ok(Ipv4Net { addr, len })
    }
}

/// A dotted netmask as a prefix length (`255.255.255.0` → 24); `None` if not contiguous.
pub fn mask_len(mask: Ipv4Addr) -> Option<u8> {
    let m = u32::from(mask);
    let len = m.leading_ones();
    (m.checked_shl(len).unwrap_or(0) == 0).then(|| u8::try_from(len).unwrap_or(32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nets_parse_contain_and_list_hosts() {
        let n: Ipv4Net = "192.168.3.1/24".parse().unwrap();
        assert_eq!(n.network().to_string(), "192.168.3.0/24");
        assert!(n.contains("192.168.3.254".parse().unwrap()));
        assert!(!n.contains("192.168.4.1".parse().unwrap()));
        assert_eq!(n.netmask().to_string(), "255.255.255.0");
        let p2p: Ipv4Net = "172.16.0.0/31".parse().unwrap();
        assert_eq!(p2p.hosts().count(), 2);
        assert_eq!(n.hosts().count(), 254);
        assert!("1.2.3.4/33".parse::<Ipv4Net>().is_err());
        assert!("1.2.3/24".parse::<Ipv4Net>().is_err());
        assert_eq!(mask_len("255.255.255.0".parse().unwrap()), Some(24));
        assert_eq!(mask_len("255.0.255.0".parse().unwrap()), None);
    }
}
