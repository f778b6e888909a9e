import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import com.retrysafe.orders.client.GaveUp;
import com.retrysafe.orders.client.InsufficientStock;
import com.retrysafe.orders.client.OrderCreated;
import com.retrysafe.orders.client.OrdersClient;
import com.retrysafe.orders.client.UnknownSku;

/**
 * The README's example ("Calling the service from Java"), against ./mvnw quarkus:dev:
 * java -cp 'client/target/orders-client-1.1.0-SNAPSHOT.jar:client/target/dependency/*' client/example/PlaceOrder.java [base URL]
 */
public class PlaceOrder {

    public static void main(String[] args) throws Exception {
        URI service = URI.create(args.length > 0 ? args[0] : "http://localhost:8080");
        String token = HttpClient.newHttpClient().send(HttpRequest.newBuilder(service.resolve("/dev/token?sub=42")).build(),
                HttpResponse.BodyHandlers.ofString()).body(); // dev mode only: a token for owner 42

        OrdersClient orders = OrdersClient.builder(service).token(token).build();
        try {
            OrderCreated created = orders.createOrder(10001, 2);      // a new key, the same on every retry
            System.out.println(created.order() + ", key " + created.idempotencyKey());
            OrderCreated again = orders.createOrder(created.idempotencyKey(), 10001, 2); // the kept key: no second order
            System.out.println("asked again with the kept key: replayed=" + again.replayed() + ", " + again.order());
        } catch (UnknownSku | InsufficientStock notPlaced) {
            System.out.println("not placed (set the stock of SKU 10001 first, README): " + notPlaced.getMessage());
        } catch (GaveUp unknown) {
            System.out.println("no answer in time; ask again later with key " + unknown.idempotencyKey());
        }
    }
}
