package floor;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;

/** The one route: the floor's "ready" is its first answer (the -Ppg variant waits for /q/health/ready). */
@Path("/hello")
public class Hello {
    @GET
    public String hello() {
        return "ok";
    }
}
