// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { AUDIO_PAYLOAD_CANONICAL_TYPES } from './audioTypes.js';
import { ENDPOINTS, type EndpointSpec } from './endpoints.js';
import { ERROR_CODES } from './errors.js';
import { HEADERS } from './headers.js';

type JsonSchema = Record<string, unknown>;

const COMPONENT_PREFIX = '#/components/schemas/';

/** Inline a schema; named parts (`.meta({ id })`) become references to components. */
function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonSchema;
  delete json.$schema;
  delete json.$defs;
  return JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', `"${COMPONENT_PREFIX}`));
}

function components(): Record<string, JsonSchema> {
  const all = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    uri: (id) => `${COMPONENT_PREFIX}${id}`,
  }) as { schemas: Record<string, JsonSchema> };
  for (const s of Object.values(all.schemas)) {
    delete s.$schema;
    // zod names each component by an `$id` fragment; JSON Schema forbids fragments in `$id`.
    delete s.$id;
  }
  return all.schemas;
}

const sessionHeaders = {
  [HEADERS.concurrentSessions]: {
    description: "The key's current number of active (and parked) sessions.",
    schema: { type: 'integer' },
  },
  [HEADERS.maxConcurrentSessions]: {
    description: "The key's concurrency cap.",
    schema: { type: 'integer' },
  },
};

function operation(name: string, ep: EndpointSpec): JsonSchema {
  const parameters: JsonSchema[] = [];
  if (ep.path.includes('{id}')) {
    parameters.push({ name: 'id', in: 'path', required: true, schema: { type: 'string' } });
  }
  if (ep.query) {
    const q = toSchema(ep.query, 'input') as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [param, schema] of Object.entries(q.properties ?? {})) {
      // Parameters with a default are optional (an input schema does not require them).
      const required = q.required?.includes(param) ?? false;
      parameters.push({ name: param, in: 'query', required, schema });
    }
  }
  const headers = ep.sessionHeaders ? sessionHeaders : undefined;
  const success: JsonSchema = { description: ep.summary, headers };
  if (ep.responseType) {
    success.content = { [ep.responseType]: { schema: { type: 'string', format: 'binary' } } };
  } else if (ep.response) {
    success.content = { 'application/json': { schema: toSchema(ep.response, 'output') } };
  } else if (ep.path === ENDPOINTS.openapi.path) {
    success.content = { 'application/json': { schema: { type: 'object' } } };
  }
  const errorResponse = {
    description: 'Error envelope (see components.schemas.ErrorEnvelope for codes).',
    headers,
    content: { 'application/json': { schema: { $ref: `${COMPONENT_PREFIX}ErrorEnvelope` } } },
  };
  const op: JsonSchema = {
    operationId: name,
    summary: ep.summary,
    parameters,
    responses: { [String(ep.status)]: success, default: errorResponse },
  };
  if (ep.auth) op.security = [{ bearer: [] }];
  if (ep.multipart && (ep.bodyKind === 'multipart' || ep.bodyKind === 'image')) {
    const content: JsonSchema = {
      'multipart/form-data': { schema: multipartSchema(ep.multipart) },
    };
    if (ep.bodyKind === 'image' && ep.body) {
      content['application/json'] = { schema: toSchema(ep.body, 'input') };
    }
    op.requestBody = { required: true, content };
  } else if (ep.bodyKind === 'audio' && ep.body) {
    const audio = { schema: { type: 'string', format: 'binary' } };
    op.requestBody = {
      required: true,
      content: {
        ...Object.fromEntries(AUDIO_PAYLOAD_CANONICAL_TYPES.map((type) => [type, audio])),
        'application/json': { schema: toSchema(ep.body, 'input') },
      },
    };
  } else if (ep.body) {
    op.requestBody = {
      required: ep.bodyKind === 'json',
      content: { 'application/json': { schema: toSchema(ep.body, 'input') } },
    };
  }
  return op;
}

/** A multipart form: the binary file part and the text fields of `fields` (a zod object). */
function multipartSchema(multipart: NonNullable<EndpointSpec['multipart']>): JsonSchema {
  const fields = multipart.fields
    ? (toSchema(multipart.fields, 'input') as {
        properties?: Record<string, JsonSchema>;
        required?: string[];
      })
    : {};
  return {
    type: 'object',
    required: [multipart.file, ...(fields.required ?? [])],
    properties: {
      [multipart.file]: { type: 'string', format: 'binary' },
      ...(fields.properties ?? {}),
    },
  };
}

/** The OpenAPI 3.1 document, generated from the endpoint table and the zod schemas. */
export function buildOpenApiDocument(version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [name, ep] of Object.entries(ENDPOINTS) as [string, EndpointSpec][]) {
    (paths[ep.path] ??= {})[ep.method.toLowerCase()] = operation(name, ep);
  }
  const schemas = components();
  // The registry already holds ErrorEnvelope (its `.meta({ id })`); only the codes are added.
  // (Converting the schema again would give `{ $ref: ErrorEnvelope }`: a reference to itself.)
  schemas.ErrorEnvelope = {
    ...schemas.ErrorEnvelope,
    description: `Error codes: ${Object.entries(ERROR_CODES)
      .map(([code, { status, type }]) => `${status} ${type}/${code}`)
      .join(', ')}.`,
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Visage avatar session API',
      version,
      description: 'Real-time talking avatars for LiveKit rooms.',
    },
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'sk_… key' } },
    },
  };
}
