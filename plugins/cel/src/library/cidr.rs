//! kube's CIDR library (`k8s.io/apiserver/pkg/cel/library/cidr.go`, kube 1.30), with Go's
//! `netip.Prefix` rules:
//!
//! - `cidr(<string>) <net.CIDR>`, `isCIDR(<string>) <bool>`, `string(<net.CIDR>) <string>`;
//! - `<net.CIDR>.containsIP(<string>|<net.IP>) <bool>`,
//!   `<net.CIDR>.containsCIDR(<string>|<net.CIDR>) <bool>`;
//! - `<net.CIDR>.ip() <net.IP>` (the address as written), `masked() <net.CIDR>`,
//!   `prefixLength() <int>`;
//! - `==` compares address and length as written (`cidr('10.0.0.1/8') != cidr('10.0.0.0/8')`).
//!
//! Parse errors carry netip's `ParsePrefix` texts under kube's prefix — twice, as kube's
//! `stringToCIDR` prefixes what `parseCIDR` already prefixed.

use super::ip::{parse_ip, IpVal};
use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `net.CIDR`, the type of [`CidrVal`].
pub static CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");

/// An address prefix (`netip.Prefix`): the address as written and the prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CidrVal {
    /// The address as written (not masked).
    pub addr: IpAddr,
    /// The prefix length in bits.
    pub bits: u8,
}

super::opaque_val!(CidrVal, CIDR_TYPE);

/// Register the CIDR library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(CIDR_TYPE.to_owned())?;
    cel::add_overload!(env, fn cidr: (CelString) -> Result<CidrVal>)?;
    cel::add_overload!(env, fn is_cidr: (CelString) -> CelBool, name = "isCIDR")?;
    cel::add_overload!(env, fn to_string: (CidrVal) -> CelString, name = "string")?;
    cel::add_member_overload!(env, fn contains_ip: (CidrVal, IpVal) -> CelBool,
        name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_ip_string: (CidrVal, CelString) -> Result<CelBool>,
        name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_cidr: (CidrVal, CidrVal) -> CelBool,
        name = "containsCIDR")?;
    cel::add_member_overload!(env, fn contains_cidr_string: (CidrVal, CelString) -> Result<CelBool>,
        name = "containsCIDR")?;
    cel::add_member_overload!(env, fn ip: (CidrVal) -> IpVal)?;
    cel::add_member_overload!(env, fn masked: (CidrVal) -> CidrVal)?;
    cel::add_member_overload!(env, fn prefix_length: (CidrVal) -> CelInt, name = "prefixLength")?;
    Ok(())
}

/// `netip.ParsePrefix`. Errors: its texts, `netip.ParsePrefix("…"): <reason>`.
fn parse_prefix(raw: &str) -> Result<CidrVal, String> {
    let err = |msg: String| format!("netip.ParsePrefix({raw:?}): {msg}");
    let Some((addr, bits)) = raw.rsplit_once('/') else {
        return Err(err("no '/'".into()));
    };
    if addr.contains('%') {
        return Err(err("IPv6 zones cannot be present in a prefix".into()));
    }
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| err(format!("ParseAddr({addr:?}): unable to parse IP")))?;
    let bad_bits = || err(format!("bad bits after slash: {bits:?}"));
    if bits.is_empty()
        || !bits.bytes().all(|b| b.is_ascii_digit())
        || (bits.len() > 1 && bits.starts_with('0'))
    {
        return Err(bad_bits());
    }
    let bits: u32 = bits.parse().map_err(|_| bad_bits())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if bits > max {
        return Err(err("prefix length out of range".into()));
    }
    Ok(CidrVal {
        addr,
        bits: bits as u8,
    })
}

/// kube's `parseCIDR`: netip's parse, then the refusal of IPv4-mapped addresses.
fn parse_cidr(raw: &str) -> Result<CidrVal, String> {
    let prefix = parse_prefix(raw)
        .map_err(|e| format!("network address parse error during conversion from string: {e}"))?;
    if let IpAddr::V6(v6) = prefix.addr {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {raw:?} is not allowed"));
        }
    }
    Ok(prefix)
}

fn cidr_error(function: &str, e: String) -> ExecutionError {
    ExecutionError::function_error(
        function,
        format!("network address parse error during conversion from string: {e}"),
    )
}

fn cidr(s: &CelString<'_>) -> Result<CidrVal, ExecutionError> {
    parse_cidr(s.inner()).map_err(|e| cidr_error("cidr", e))
}

fn is_cidr(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse_cidr(s.inner()).is_ok())
}

fn to_string(c: &CidrVal) -> CelString<'static> {
    CelString::from(format!("{}/{}", c.addr, c.bits))
}

/// The address with every bit past the prefix cleared.
fn mask(addr: IpAddr, bits: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let m = u32::MAX.checked_shl(32 - bits as u32).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & m))
        }
        IpAddr::V6(v6) => {
            let m = u128::MAX.checked_shl(128 - bits as u32).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & m))
        }
    }
}

/// `Prefix.Contains`: same family, and the address masked to the prefix is the prefix's.
fn contains(c: &CidrVal, ip: IpAddr) -> bool {
    c.addr.is_ipv4() == ip.is_ipv4() && mask(ip, c.bits) == mask(c.addr, c.bits)
}

fn contains_ip(c: &CidrVal, ip: &IpVal) -> CelBool {
    CelBool::from(contains(c, ip.0))
}

fn contains_ip_string(c: &CidrVal, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let ip = parse_ip(s.inner()).map_err(|e| ExecutionError::function_error("containsIP", e))?;
    Ok(CelBool::from(contains(c, ip)))
}

/// kube's `cidrContainsCIDR`: the other prefix is at least as long and lies inside.
fn contains_cidr(c: &CidrVal, other: &CidrVal) -> CelBool {
    CelBool::from(
        c.addr.is_ipv4() == other.addr.is_ipv4()
            && mask(other.addr, c.bits) == mask(c.addr, c.bits)
            && c.bits <= other.bits,
    )
}

fn contains_cidr_string(c: &CidrVal, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other = parse_cidr(s.inner()).map_err(|e| cidr_error("containsCIDR", e))?;
    Ok(contains_cidr(c, &other))
}

fn ip(c: &CidrVal) -> IpVal {
    IpVal(c.addr)
}

fn masked(c: &CidrVal) -> CidrVal {
    CidrVal {
        addr: mask(c.addr, c.bits),
        bits: c.bits,
    }
}

fn prefix_length(c: &CidrVal) -> CelInt {
    CelInt::from(c.bits as i64)
}
