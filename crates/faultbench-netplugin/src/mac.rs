//! Interface MACs: the one a lab gives (`kathara.mac_addr`), or one derived from stable names so
//! a device keeps its MAC from one deploy to the next.

use sha2::{Digest, Sha256};

/// Parses `aa:bb:cc:dd:ee:ff` (or with `-`), refusing what an interface cannot carry: the zero
/// address and group (multicast/broadcast) addresses.
pub fn parse(text: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = text.trim().split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(format!("{text:?} is not a MAC address (six hex pairs)"));
    }
    let mut mac = [0u8; 6];
    for (slot, p) in mac.iter_mut().zip(&parts) {
        if p.len() != 2 {
            return Err(format!("{text:?} is not a MAC address (six hex pairs)"));
        }
        *slot = u8::from_str_radix(p, 16)
            .map_err(|_| format!("{text:?} is not a MAC address (six hex pairs)"))?;
    }
    if mac == [0; 6] {
        return Err(format!("{text:?} is the zero MAC address"));
    }
    if mac[0] & 1 == 1 {
        return Err(format!(
            "{text:?} is a group (multicast) address; an interface needs a unicast one"
        ));
    }
    Ok(mac)
}

/// A locally administered unicast MAC derived from `seed` (e.g. `r1-0`): the same seed gives
/// the same MAC on every machine.
pub fn derive(seed: &str) -> [u8; 6] {
    let h = Sha256::digest(seed.as_bytes());
    let mut mac = [h[0], h[1], h[2], h[3], h[4], h[5]];
    mac[0] = (mac[0] & 0xfe) | 0x02;
    mac
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn format(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lab_mac_round_trips_and_bad_ones_are_named() {
        assert_eq!(
            format(parse("02:AA:00:00:00:01").unwrap()),
            "02:aa:00:00:00:01"
        );
        assert!(
            parse("02:aa:00:00:01")
                .unwrap_err()
                .contains("six hex pairs")
        );
        assert!(
            parse("01:00:5e:00:00:01")
                .unwrap_err()
                .contains("multicast")
        );
        assert!(parse("00:00:00:00:00:00").unwrap_err().contains("zero"));
        assert!(parse("0g:00:00:00:00:01").is_err());
        assert!(parse("002:00:00:00:00:1").is_err());
    }

    #[test]
    fn derived_macs_are_stable_local_and_unicast() {
        let a = derive("r1-0");
        assert_eq!(a, derive("r1-0"));
        assert_ne!(a, derive("r1-1"));
        assert_eq!(a[0] & 0x03, 0x02);
    }
}
