"""``python -m pipeline.certs DIR``: a self-signed CA and TLS certificates for a small cluster.

Writes into DIR::

    ca.pem                      the certificate authority (give it to every party)
    ca-key.pem                  the CA's private key (keep it away from the cluster)
    scheduler.pem, scheduler-key.pem
    worker.pem, worker-key.pem
    client.pem, client-key.pem

A folder that already holds any of these files is refused (exit status 2, naming them): a new
CA would leave every party holding the old certificates refused by the new ones.  Give
``--force`` to replace them.

Every certificate is signed by the CA and valid for the host names and IP addresses given
with ``--host`` (127.0.0.1 and localhost by default), for client and server use: Dask checks
both ends against the CA.  Private keys are written with mode 0600.

Then, for example::

    dask scheduler --tls-ca-file DIR/ca.pem --tls-cert DIR/scheduler.pem \\
        --tls-key DIR/scheduler-key.pem --host 0.0.0.0 --port 8786 --protocol tls
    dask worker tls://HOST:8786 --tls-ca-file DIR/ca.pem --tls-cert DIR/worker.pem \\
        --tls-key DIR/worker-key.pem
    python -m pipeline cluster=address cluster.address=tls://HOST:8786 \\
        cluster.tls.ca_file=DIR/ca.pem cluster.tls.cert=DIR/client.pem \\
        cluster.tls.key=DIR/client-key.pem
"""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import ipaddress
import os
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ROLES = ("scheduler", "worker", "client")
FILES = ("ca.pem", "ca-key.pem", *(f"{r}{end}" for r in ROLES for end in (".pem", "-key.pem")))


class CertsExist(FileExistsError):
    """The folder already holds certificates or keys (replaced only when forced)."""


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "guesslab cluster"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _alt_names(hosts: list[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def make_ca(days: int = 365) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A new CA key and self-signed CA certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("guesslab CA"))
        .issuer_name(_name("guesslab CA"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_leaf(
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    role: str,
    hosts: list[str],
    days: int = 365,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A key and a CA-signed certificate for one role, valid for ``hosts``."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(f"guesslab {role}"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_alt_names(hosts), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    """The private key in PEM (PKCS#8, unencrypted)."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def cert_pem(cert: x509.Certificate) -> bytes:
    """The certificate in PEM."""
    return cert.public_bytes(serialization.Encoding.PEM)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key_pem(key))
    os.chmod(path, 0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert_pem(cert))


def write_cluster_certs(
    folder: Path, hosts: list[str], days: int = 365, *, force: bool = False
) -> dict[str, Path]:
    """Create the CA and one certificate per role in ``folder``; return the paths by name.

    CertsExist, before anything is written, when ``folder`` holds any of FILES already
    (unless ``force``); NotADirectoryError when it is not a folder."""
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    there = [name for name in FILES if os.path.lexists(folder / name)]
    if there and not force:
        raise CertsExist(
            f"{folder} already holds {', '.join(there)}: certificates of a new CA are refused "
            "by every party still using these (a running cluster); give --force to replace "
            "them, or choose another folder"
        )
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = make_ca(days)
    paths = {"ca": folder / "ca.pem", "ca_key": folder / "ca-key.pem"}
    _write_cert(paths["ca"], ca_cert)
    _write_key(paths["ca_key"], ca_key)
    for role in ROLES:
        key, cert = make_leaf(ca_key, ca_cert, role, hosts, days)
        paths[role] = folder / f"{role}.pem"
        paths[f"{role}_key"] = folder / f"{role}-key.pem"
        _write_cert(paths[role], cert)
        _write_key(paths[f"{role}_key"], key)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command line: python -m pipeline.certs DIR [--host NAME ...] [--days N] [--force];
    the exit status (2, with one line, for a folder it refuses or cannot write)."""
    ap = argparse.ArgumentParser(
        prog="python -m pipeline.certs",
        description="Create a self-signed CA and TLS certificates for a Dask cluster.",
    )
    ap.add_argument("folder", type=Path, help="where to write the PEM files")
    ap.add_argument(
        "--host",
        action="append",
        default=None,
        help="a host name or IP the certificates are valid for (repeatable; "
        "default: 127.0.0.1 and localhost)",
    )
    ap.add_argument("--days", type=int, default=365, help="validity in days (default 365)")
    ap.add_argument(
        "--force", action="store_true", help="replace the CA, keys and certificates in DIR"
    )
    args = ap.parse_args(argv)
    hosts = args.host or ["127.0.0.1", "localhost"]
    try:
        paths = write_cluster_certs(args.folder, hosts, args.days, force=args.force)
    except CertsExist as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # not a folder, not writable, a full disk
        print(f"error: {exc.filename or args.folder}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote a CA and certificates for {', '.join(ROLES)} to {args.folder}")
    print(f"valid for: {', '.join(hosts)}; private keys (*-key.pem) have mode 0600")
    print("client settings:")
    print(f"  cluster.tls.ca_file={paths['ca']}")
    print(f"  cluster.tls.cert={paths['client']}")
    print(f"  cluster.tls.key={paths['client_key']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
