#!/usr/bin/env node
/** Bundles the CLI (rolldown.config.mjs) through rolldown's API: its command line prints a size line per file on every build, which read like failures. */
import { build } from 'rolldown';
import config from '../rolldown.config.mjs';

await build(config);
