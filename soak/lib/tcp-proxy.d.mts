/** Types of tcp-proxy.mjs, for the tests that reuse it. */
export interface TcpProxy {
  port: number;
  stats(): { cuts: number; refused: number; open: number };
  /** Destroys every open connection and refuses new ones for `ms`. */
  cut(ms: number): void;
  close(): Promise<void>;
}
export function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy>;
