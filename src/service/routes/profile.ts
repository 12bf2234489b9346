// /profile: who the key acts for, in the public API's profile shape plus ferry's account fields.
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { baseUrlOf } from '../http/body.js';
import { defineRoute } from '../http/route.js';

export function registerProfileRoutes(app: FastifyInstance, _ctx: ServiceContext): void {
  defineRoute(app, '/profile', {
    GET: async (request) => {
      const { client, caller } = request.auth;
      return {
        name: client.name,
        redirectUrl: `${baseUrlOf(request)}/link`,
        whiteListUrls: [],
        confirmCompanyName: false,
        clientId: client.id,
        plan: client.plan,
        created: client.created,
        isAdmin: caller.is_admin === 1,
        actingAsClient: caller.id !== client.id,
      };
    },
  });
}
