/**
 * The route table's unit: a route looks at a request and, when the request is its, says
 * its name (the metrics label) and how to answer it. The listener tries them in order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RouteName =
  | 'mcp'
  | 'healthz'
  | 'metrics'
  | 'banners'
  | 'banners_stream'
  | 'webhooks'
  | 'widget'
  | 'console'
  | 'answer'
  | 'other';

export interface Routed {
  name: RouteName;
  serve(): Promise<void> | void;
}

export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Routed | undefined;
