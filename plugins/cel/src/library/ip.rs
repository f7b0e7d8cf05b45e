//! kube's IP library (`k8s.io/apiserver/pkg/cel/library/ip.go`, kube 1.30), with Go's
//! `net/netip` rules:
//!
//! - `ip(<string>) <net.IP>`, `isIP(<string>) <bool>`, `ip.isCanonical(<string>) <bool>`,
//!   `string(<net.IP>) <string>`;
//! - `<net.IP>.family() <int>` (4 or 6), `isUnspecified`, `isLoopback`,
//!   `isLinkLocalMulticast`, `isLinkLocalUnicast`, `isGlobalUnicast`;
//! - `==` compares addresses.
//!
//! As kube's, an address with a zone (`fe80::1%eth0`) or an IPv4-mapped IPv6 address
//! (`::ffff:1.2.3.4`) is refused. The reason in a parse error is netip's generic one
//! (`ParseAddr("…"): unable to parse IP`), not its detailed texts.

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `net.IP`, the type of [`IpVal`].
pub static IP_TYPE: Type = Type::new_unspecified_type("net.IP");

/// An IP address as a CEL value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpVal(pub IpAddr);

super::opaque_val!(IpVal, IP_TYPE);

/// Register the IP library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(IP_TYPE.to_owned())?;
    cel::add_overload!(env, fn ip: (CelString) -> Result<IpVal>)?;
    cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP")?;
    cel::add_overload!(env, fn is_canonical: (CelString) -> Result<CelBool>,
        name = "ip.isCanonical")?;
    cel::add_overload!(env, fn to_string: (IpVal) -> CelString, name = "string")?;
    cel::add_member_overload!(env, fn family: (IpVal) -> CelInt)?;
    cel::add_member_overload!(env, fn is_unspecified: (IpVal) -> CelBool, name = "isUnspecified")?;
    cel::add_member_overload!(env, fn is_loopback: (IpVal) -> CelBool, name = "isLoopback")?;
    cel::add_member_overload!(env, fn is_link_local_multicast: (IpVal) -> CelBool,
        name = "isLinkLocalMulticast")?;
    cel::add_member_overload!(env, fn is_link_local_unicast: (IpVal) -> CelBool,
        name = "isLinkLocalUnicast")?;
    cel::add_member_overload!(env, fn is_global_unicast: (IpVal) -> CelBool,
        name = "isGlobalUnicast")?;
    Ok(())
}

/// `parseIPAddr`: netip's parse, then kube's refusals of zones and IPv4-mapped addresses.
/// Errors: kube's messages.
pub fn parse_ip(raw: &str) -> Result<IpAddr, String> {
    if let Some((addr, _zone)) = raw.split_once('%') {
        if addr.parse::<Ipv6Addr>().is_ok() {
            return Err(format!("IP address {raw:?} with zone value is not allowed"));
        }
    }
    let addr: IpAddr = raw.parse().map_err(|_| {
        format!(
            "IP Address {raw:?} parse error during conversion from string: ParseAddr({raw:?}): unable to parse IP"
        )
    })?;
    if let IpAddr::V6(v6) = addr {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {raw:?} is not allowed"));
        }
    }
    Ok(addr)
}

fn ip(s: &CelString<'_>) -> Result<IpVal, ExecutionError> {
    parse_ip(s.inner())
        .map(IpVal)
        .map_err(|e| ExecutionError::function_error("ip", e))
}

fn is_ip(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse_ip(s.inner()).is_ok())
}

/// Whether the string is the address's canonical form (RFC 5952 for IPv6, as Go's
/// `Addr.String`).
fn is_canonical(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr =
        parse_ip(s.inner()).map_err(|e| ExecutionError::function_error("ip.isCanonical", e))?;
    Ok(CelBool::from(addr.to_string() == s.inner()))
}

fn to_string(ip: &IpVal) -> CelString<'static> {
    CelString::from(ip.0.to_string())
}

fn family(ip: &IpVal) -> CelInt {
    CelInt::from(if ip.0.is_ipv4() { 4 } else { 6 })
}

fn is_unspecified(ip: &IpVal) -> CelBool {
    CelBool::from(ip.0.is_unspecified())
}

fn is_loopback(ip: &IpVal) -> CelBool {
    CelBool::from(ip.0.is_loopback())
}

/// Go's `Addr.IsLinkLocalMulticast`: 224.0.0.0/24, or ff02::/16 (link-local scope).
fn link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// Go's `Addr.IsLinkLocalUnicast`: 169.254.0.0/16, or fe80::/10.
fn link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_multicast(ip: &IpVal) -> CelBool {
    CelBool::from(link_local_multicast(ip.0))
}

fn is_link_local_unicast(ip: &IpVal) -> CelBool {
    CelBool::from(link_local_unicast(ip.0))
}

/// Go's `Addr.IsGlobalUnicast`: not unspecified, not the IPv4 broadcast address, not
/// loopback, multicast or link-local unicast (private and ULA addresses are global unicast).
fn is_global_unicast(ip: &IpVal) -> CelBool {
    let a = ip.0;
    let broadcast = a == IpAddr::V4(Ipv4Addr::BROADCAST);
    CelBool::from(
        !a.is_unspecified()
            && !broadcast
            && !a.is_loopback()
            && !a.is_multicast()
            && !link_local_unicast(a),
    )
}
