"""TLS for desched's servers (the webhook, the executor's metrics): certificates and server contexts.

Contract:

* :func:`generate` makes a new CA and a serving certificate it signs. Keys are ECDSA P-256, signatures ECDSA with
  SHA-256. The CA (``basicConstraints`` CA, path length 0, critical; key usage ``keyCertSign``, ``cRLSign``) is valid
  for :data:`CA_DAYS` (10 years); its private key is not returned, so it can sign nothing else. The serving
  certificate is valid for ``days`` (default :data:`DEFAULT_DAYS`). Both start :data:`BACKDATE` in the past (clock
  skew). Serving certificate: SANs every DNS name and IP given, common name the first DNS name, key usage
  ``digitalSignature``, ``keyEncipherment`` (critical), extended key usage ``serverAuth``, not a CA. It needs
  ``cryptography`` (extras ``webhook`` and ``executor``), imported only when called.
* :func:`write_atomic` replaces a file so that a reader sees the old one or the new one, never a part.
* :func:`server_context` is a server-side SSL context with a certificate chain loaded, accepting TLS 1.3 and, unless
  the minimum is 1.3, TLS 1.2 with ECDHE key exchange and AEAD ciphers only (:data:`TLS12_CIPHERS`: AES-GCM,
  ChaCha20-Poly1305); CBC suites, static RSA key exchange and compression are refused.
"""

import contextlib
import datetime
import ipaddress
import os
import ssl
import tempfile
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

__all__ = [
    "BACKDATE",
    "CA_DAYS",
    "DEFAULT_DAYS",
    "TLS12_CIPHERS",
    "TLS_VERSIONS",
    "Bundle",
    "IPAddress",
    "generate",
    "server_context",
    "write_atomic",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
CA_DAYS = 3650
DEFAULT_DAYS = 365
BACKDATE = datetime.timedelta(minutes=5)
TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"  # OpenSSL cipher string; TLS 1.3 suites are all AEAD and not affected
TLS_VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}  # the minimum versions offered


class Bundle(NamedTuple):
    """PEM encodings: the CA certificate, the serving certificate and its private key (PKCS #8, unencrypted)."""

    ca: bytes
    cert: bytes
    key: bytes


def generate(
    dns_names: list[str], ips: list[IPAddress], days: int = DEFAULT_DAYS, *, purpose: str = "webhook"
) -> Bundle:
    """A new CA (common name ``desched PURPOSE CA <time>``) and a serving certificate it signs, as the module contract
    describes; ``dns_names`` is not empty."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    start = datetime.datetime.now(datetime.timezone.utc) - BACKDATE
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"desched {purpose} CA {start:%Y-%m-%d %H:%M:%S}")])

    def usage(*, signature: bool = False, encipherment: bool = False, sign: bool = False) -> "x509.KeyUsage":
        return x509.KeyUsage(
            digital_signature=signature,
            content_commitment=False,
            key_encipherment=encipherment,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=sign,
            crl_sign=sign,
            encipher_only=False,
            decipher_only=False,
        )

    def builder(subject: "x509.Name", owner: "EllipticCurvePrivateKey", lifetime: int) -> "x509.CertificateBuilder":
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(owner.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(start + datetime.timedelta(days=lifetime))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(owner.public_key()), critical=False)
        )

    ca = (
        builder(ca_name, ca_key, CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage(sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    names: list[x509.GeneralName] = [x509.DNSName(name) for name in dns_names]
    names += [x509.IPAddress(ip) for ip in ips]
    cert = (
        builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]), key, days)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage(signature=True, encipherment=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Bundle(ca.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.PEM), key_pem)


def write_atomic(path: str, data: bytes, mode: int) -> None:
    """Replace ``path`` by a file holding ``data`` with permissions ``mode`` through a temporary file beside it, fsync
    and rename. Raises ``OSError``; ``path`` is then unchanged and the temporary file removed."""
    directory, base = os.path.split(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{base}.", suffix=".desched-tmp", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def server_context(cert_file: str, key_file: str, minimum: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2) -> ssl.SSLContext:
    """A server SSL context (see the module contract) for ``minimum`` and later serving the chain in ``cert_file``
    (the certificate first, then any CA) with the key in ``key_file``. Raises ``ssl.SSLError`` or ``OSError`` when
    they do not load as a pair (a key that does not match the certificate included)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = minimum
    context.set_ciphers(TLS12_CIPHERS)
    context.options |= ssl.OP_NO_COMPRESSION
    context.load_cert_chain(cert_file, key_file)
    return context
