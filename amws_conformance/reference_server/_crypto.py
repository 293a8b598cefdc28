"""AES-256-CBC field encryption and HMAC-SHA256 signatures, on top of ``cryptography``."""

from __future__ import annotations

import base64
import hashlib
import hmac

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def encrypt_text(plain: str, secret_hex: str, iv_hex: str) -> str:
    """Base64 of AES-256-CBC(PKCS#7(utf-8 text))."""
    padder = padding.PKCS7(128).padder()
    data = padder.update(plain.encode("utf-8")) + padder.finalize()
    enc = Cipher(
        algorithms.AES(bytes.fromhex(secret_hex)), modes.CBC(bytes.fromhex(iv_hex))
    ).encryptor()
    return base64.b64encode(enc.update(data) + enc.finalize()).decode("ascii")


def decrypt_text(cipher_b64: str, secret_hex: str, iv_hex: str) -> str:
    """Inverse of :func:`encrypt_text`; ``ValueError`` on anything that does not decrypt."""
    try:
        raw = base64.b64decode(cipher_b64, validate=True)
        dec = Cipher(
            algorithms.AES(bytes.fromhex(secret_hex)), modes.CBC(bytes.fromhex(iv_hex))
        ).decryptor()
        padded = dec.update(raw) + dec.finalize()
        unpadder = padding.PKCS7(128).unpadder()
        return (unpadder.update(padded) + unpadder.finalize()).decode("utf-8")
    except Exception as exc:  # binascii, padding and unicode errors all mean "not ours"
        raise ValueError("not a ciphertext of this key") from exc


def hmac_sha256_b64(key: str, text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return base64.b64encode(hmac.new(key.encode("utf-8"), data, hashlib.sha256).digest()).decode()


def hmac_sha256_urlsafe(key: bytes, text: str) -> str:
    digest = hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def equal(a: str, b: str) -> bool:
    """Constant-time comparison of two texts."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
