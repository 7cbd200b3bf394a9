"""``python -m pipeline.certs DIR``: a self-signed CA and TLS certificates for a small cluster.

Writes into DIR::

    ca.pem                      the certificate authority (give it to every party)
    ca-key.pem                  the CA's private key (keep it away from the cluster)
    scheduler.pem, scheduler-key.pem
    worker.pem, worker-key.pem
    client.pem, client-key.pem

A folder that already holds any of these files is refused (exit status 2, naming them): a new
CA would leave every party holding the old certificates refused by the new ones.  Give
``--force`` to replace them: each is then written as a new file beside it and renamed over it
(a private key is never readable by another account, not even for a moment), and only
regular files are replaced: a link (which would carry the CA's private key to wherever it
points), a folder or any other entry of these names is refused, naming it, before anything
is written.

``--days`` is from 1 to MAX_DAYS (100 years); ``--host`` a DNS name (letters, digits and
hyphens in dot-separated labels, the last not all digits, ``*`` as the first label for a
wildcard) or an IPv4 or IPv6 address (``256.256.256.256`` and ``1.2.3`` are neither).
Anything else is refused in one line naming the option and the value (exit status 2).

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
import contextlib
import datetime as dt
import errno
import ipaddress
import os
import re
import secrets
import stat
import sys
from pathlib import Path
from typing import NoReturn

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ROLES = ("scheduler", "worker", "client")
FILES = ("ca.pem", "ca-key.pem", *(f"{r}{end}" for r in ROLES for end in (".pem", "-key.pem")))


MAX_DAYS = 36_500  # 100 years: far within what X.509 dates hold (year 9999)


class CertsExist(FileExistsError):
    """The folder already holds certificates or keys (replaced only when forced)."""


class NotReplaced(FileExistsError):
    """An entry of a certificate's or key's name that is not a regular file (a link, a
    folder, a FIFO...): never written through or replaced."""


_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def host_problem(host: str) -> str | None:
    """Why ``host`` cannot be a certificate's host name or IP address, or None."""
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(host)
        return None
    if not host:
        return "an empty host name"
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if labels[0] == "*" and len(labels) > 1:
        labels = labels[1:]  # a wildcard certificate: *.example.org
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return (
            "not a host name or IP address (a DNS name is dot-separated labels of 1 to 63 "
            "letters, digits and inner hyphens, 253 characters at most)"
        )
    if labels[-1].isdigit():  # a top-level domain is never all digits (RFC 3696, 2)
        return (
            "not an IP address (an IPv4 address is four numbers of 0 to 255) nor a DNS name "
            "(its last label is never all digits)"
        )
    return None


def days_problem(days: int) -> str | None:
    """Why ``days`` cannot be the certificates' validity, or None."""
    if 1 <= days <= MAX_DAYS:
        return None
    return f"the certificates' validity is 1 to {MAX_DAYS:,} days (100 years)"


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


def _not_replaced(folder: Path) -> None:
    """NotReplaced naming the first entry of FILES in ``folder`` that is not a regular file."""
    for name in FILES:
        path = folder / name
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):  # none, or no folder (made next)
            continue
        if stat.S_ISREG(mode):
            continue
        what = (
            f"a symbolic link (to {os.readlink(path)})"
            if stat.S_ISLNK(mode)
            else "a folder"
            if stat.S_ISDIR(mode)
            else "not a regular file"
        )
        raise NotReplaced(
            f"{path} is {what}: certificates and keys are written as new regular files, "
            "never through a link or into another kind of entry; remove it, or choose "
            "another folder"
        )


def _temporary(path: Path, data: bytes, mode: int) -> Path:
    """A new file beside ``path`` holding ``data``, with ``mode`` from its creation (a link
    or file of its name fails, never followed), flushed to disk."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        os.fchmod(fd, mode)  # whatever the umask
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _write_all(files: dict[Path, tuple[bytes, int]]) -> None:
    """Write every file (path -> (bytes, mode)) as a new file renamed over its path: all
    are written before any is renamed, so a full disk leaves the old set whole."""
    written: dict[Path, Path] = {}
    try:
        for path, (data, mode) in files.items():
            written[path] = _temporary(path, data, mode)
        for path, tmp in list(written.items()):
            os.replace(tmp, path)  # a link or file at ``path`` is replaced, never followed
            del written[path]
    finally:
        for tmp in written.values():
            tmp.unlink(missing_ok=True)


def write_cluster_certs(
    folder: Path, hosts: list[str], days: int = 365, *, force: bool = False
) -> dict[str, Path]:
    """Create the CA and one certificate per role in ``folder``; return the paths by name.

    CertsExist, before anything is written, when ``folder`` holds any of FILES already
    (unless ``force``); NotReplaced when one of them is not a regular file (with
    ``force``); NotADirectoryError when it is not a folder.  Each file is written new and
    renamed over its path (keys with mode 0600 from their creation)."""
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    there = [name for name in FILES if os.path.lexists(folder / name)]
    if there and not force:
        raise CertsExist(
            f"{folder} already holds {', '.join(there)}: certificates of a new CA are refused "
            "by every party still using these (a running cluster); give --force to replace "
            "them, or choose another folder"
        )
    _not_replaced(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = make_ca(days)
    paths = {"ca": folder / "ca.pem", "ca_key": folder / "ca-key.pem"}
    files = {paths["ca"]: (cert_pem(ca_cert), 0o644), paths["ca_key"]: (key_pem(ca_key), 0o600)}
    for role in ROLES:
        key, cert = make_leaf(ca_key, ca_cert, role, hosts, days)
        paths[role] = folder / f"{role}.pem"
        paths[f"{role}_key"] = folder / f"{role}-key.pem"
        files[paths[role]] = (cert_pem(cert), 0o644)
        files[paths[f"{role}_key"]] = (key_pem(key), 0o600)
    _write_all(files)
    return paths


class _Parser(argparse.ArgumentParser):
    """argparse, its refusals in one line (exit status 2) without the usage lines."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message} (see python -m pipeline.certs --help)", file=sys.stderr)
        raise SystemExit(2)


def _refused(option: str, value: object, problem: str) -> int:
    from pipeline.errors import short_repr

    print(f"error: {option}={short_repr(value)}: {problem}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Command line: python -m pipeline.certs DIR [--host NAME ...] [--days N] [--force];
    the exit status (2, with one line, for a folder it refuses or cannot write)."""
    ap = _Parser(
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
    ap.add_argument(
        "--days", type=int, default=365, help=f"validity in days, 1 to {MAX_DAYS} (default 365)"
    )
    ap.add_argument(
        "--force", action="store_true", help="replace the CA, keys and certificates in DIR"
    )
    args = ap.parse_args(argv)
    hosts = ["127.0.0.1", "localhost"] if args.host is None else args.host
    if (problem := days_problem(args.days)) is not None:
        return _refused("--days", args.days, problem)
    for host in hosts:
        if (problem := host_problem(host)) is not None:
            return _refused("--host", host, problem)
    try:
        paths = write_cluster_certs(args.folder, hosts, args.days, force=args.force)
    except (CertsExist, NotReplaced) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # not a folder, not writable, a full disk, a name too long
        from pipeline.errors import short_path

        print(f"error: {short_path(exc.filename or args.folder)}: {exc.strerror or exc}",
              file=sys.stderr)  # fmt: skip
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
