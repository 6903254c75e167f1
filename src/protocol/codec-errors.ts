// Errors of the wire codecs: ProtocolError for malformed or truncated input (the Reader, the generated
// decoders), UnsupportedVersionError for a value that the requested version cannot express.

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** Kafka's UnsupportedVersionException: the value cannot be expressed in the requested version. */
export class UnsupportedVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedVersionError';
  }
}

/** A non-default value was given for a non-ignorable field absent from `version`. */
export function unsupportedField(path: string, version: number): UnsupportedVersionError {
  return new UnsupportedVersionError(`attempted to write a non-default ${path} at version ${version}`);
}

/** null was given (or received) for a field that is not nullable in `version`. */
export function nullNotAllowed(path: string, version: number): ProtocolError {
  return new ProtocolError(`${path} is not nullable in version ${version}`);
}

/** Throws UnsupportedVersionError when version is outside min..max. */
export function checkVersion(name: string, version: number, min: number, max: number): void {
  if (!(version >= min && version <= max)) {
    throw new UnsupportedVersionError(`${name} version ${version} is not in the supported range ${min}-${max}`);
  }
}
