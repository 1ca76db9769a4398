//! Ethernet frame surgery for the daemons: pushing an 802.1Q tag into a frame that carries a
//! virtio-net header, keeping the header's checksum/GSO offsets right.
//!
//! Layout handled here: `[virtio_net_hdr (10 bytes)][dst 6][src 6][type …]`. The header's
//! `csum_start` and `hdr_len` count from the frame start, so inserting 4 bytes after the MAC
//! addresses moves them by 4.

use super::sys::VNET_HDR_LEN;

const NEEDS_CSUM: u8 = 1;
const TPID_8021Q: [u8; 2] = [0x81, 0x00];

/// Copy `frame` (header + untagged Ethernet frame) into `out` with an 802.1Q tag `tci`
/// pushed after the MAC addresses. Returns false when the frame is too short to tag.
pub fn push_tag(frame: &[u8], tci: u16, out: &mut Vec<u8>) -> bool {
    out.clear();
    if frame.len() < VNET_HDR_LEN + 14 {
        return false;
    }
    let (hdr, eth) = frame.split_at(VNET_HDR_LEN);
    out.extend_from_slice(hdr);
    let flags = hdr[0];
    let gso_type = hdr[1];
    if gso_type != 0 {
        bump_u16(&mut out[2..4], 4); // hdr_len
    }
    if flags & NEEDS_CSUM != 0 {
        bump_u16(&mut out[6..8], 4); // csum_start
    }
    out.extend_from_slice(&eth[..12]);
    out.extend_from_slice(&TPID_8021Q);
    out.extend_from_slice(&tci.to_be_bytes());
    out.extend_from_slice(&eth[12..]);
    true
}

fn bump_u16(field: &mut [u8], by: u16) {
    let v = u16::from_ne_bytes([field[0], field[1]]);
    if v != 0 {
        field.copy_from_slice(&v.saturating_add(by).to_ne_bytes());
    }
}

/// Layer-2 hash of a frame (header + Ethernet) like the bonding driver's `layer2` policy:
/// last byte of both MACs and the EtherType.
pub fn l2_hash(frame: &[u8]) -> usize {
    let eth = &frame[VNET_HDR_LEN.min(frame.len())..];
    if eth.len() < 14 {
        return 0;
    }
    (eth[5] ^ eth[11] ^ eth[12] ^ eth[13]) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_tag_inserts_after_macs_and_moves_offsets() {
        let mut f = vec![NEEDS_CSUM, 1, 54, 0, 0xb4, 0x05, 34, 0, 16, 0];
        f.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00, 0x45]);
        let mut out = Vec::new();
        assert!(push_tag(&f, 10, &mut out));
        assert_eq!(out.len(), f.len() + 4);
        assert_eq!(
            &out[VNET_HDR_LEN + 12..VNET_HDR_LEN + 18],
            &[0x81, 0, 0, 10, 0x08, 0]
        );
        assert_eq!(u16::from_ne_bytes([out[2], out[3]]), 58);
        assert_eq!(u16::from_ne_bytes([out[6], out[7]]), 38);
        assert!(!push_tag(&f[..20], 10, &mut out));
    }
}
