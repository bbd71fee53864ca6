/** What every composition root returns: the runner starts them in order and stops them in reverse. */
export interface Service {
  readonly name: string;
  start(): Promise<void>;
  /** Stops accepting work and finishes what is in flight. */
  stop(): Promise<void>;
}
