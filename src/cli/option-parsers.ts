import { InvalidArgumentError } from 'commander';

/** A commander parser for a whole-number option: anything else is a usage error (exit 2) naming the flag. */
export function wholeNumber(flag: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${flag} must be a whole number of at least ${min}, not "${value}"`);
    return n;
  };
}
