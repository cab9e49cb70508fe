import { vehicleHealth } from "@/server/vehicle/http";

export const dynamic = "force-dynamic";

export const GET = vehicleHealth;
